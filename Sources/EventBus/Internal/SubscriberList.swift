/// An intrusive doubly linked list of subscription nodes, in subscription order (so in id order).
///
/// O(1) append and O(1) remove given the node; the list owns its nodes through `next`. Only ever
/// touched under the container's lock.
struct SubscriberList {
    private(set) var head: SubscriptionNode?
    private(set) unowned(unsafe) var tail: SubscriptionNode?  // unowned(unsafe): `head`'s `next` chain owns it

    var isEmpty: Bool { head == nil }

    /// `head`, without the reference counting of a strong load (for walks under the lock).
    @inline(__always)
    // Unmanaged: only used under the lock, while the list keeps the node alive.
    var unmanagedHead: Unmanaged<SubscriptionNode>? { head.map { Unmanaged.passUnretained($0) } }

    @inline(__always)
    mutating func append(_ node: SubscriptionNode) {
        node.previous = tail
        node.next = nil
        node.isLinked = true
        if let tail { tail.next = node } else { head = node }
        tail = node
    }

    /// Unlinks `node`, which must be in this list. The caller keeps `node` alive past the call.
    @inline(__always)
    mutating func remove(_ node: SubscriptionNode) {
        if let previous = node.previous { previous.next = node.next } else { head = node.next }
        if let next = node.next { next.previous = node.previous } else { tail = node.previous }
        node.previous = nil
        node.next = nil
        node.isLinked = false
    }
}
