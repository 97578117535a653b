/// An intrusive doubly linked list of subscription nodes, in subscription order (so in id order).
///
/// O(1) append and O(1) remove given the node. The list owns each node it links through one
/// reference, taken by `append` and handed to the caller by `remove`: its links are unmanaged, so
/// that linking, unlinking and walking cost no further reference counting. Only ever touched under
/// the bus's lock.
struct SubscriberList {
    // Unmanaged: the list holds a reference to each linked node (see above).
    private(set) var head: Unmanaged<SubscriptionNode>?
    private var tail: Unmanaged<SubscriptionNode>?  // Unmanaged: as `head`

    var isEmpty: Bool { head == nil }

    /// Links `node` at the end, taking a reference to it.
    @inline(__always)
    mutating func append(_ node: SubscriptionNode) {
        let link = Unmanaged.passRetained(node)  // the list's reference, handed back by `remove`
        node.previous = tail
        node.next = nil
        node.isLinked = true
        // Unmanaged: a linked node is alive while the list holds its reference (the lock is held).
        if let tail { tail._withUnsafeGuaranteedRef { $0.next = link } } else { head = link }
        tail = link
    }

    /// Unlinks `node`, which must be in this list, and hands the list's reference to it to the
    /// caller, who releases it after unlocking (`AfterUnlock.adopt`).
    @inline(__always)
    // Unmanaged: the list's own reference to `node`, which the caller must release (`AfterUnlock.adopt`).
    mutating func remove(_ node: SubscriptionNode) -> Unmanaged<SubscriptionNode> {
        // Unmanaged: the neighbours are linked, so alive while the list holds their references.
        let (previous, next) = (node.previous, node.next)
        if let previous { previous._withUnsafeGuaranteedRef { $0.next = next } } else { head = next }
        if let next { next._withUnsafeGuaranteedRef { $0.previous = previous } } else { tail = previous }
        node.previous = nil
        node.next = nil
        node.isLinked = false
        return Unmanaged.passUnretained(node)  // Unmanaged: the list's reference
    }
}
