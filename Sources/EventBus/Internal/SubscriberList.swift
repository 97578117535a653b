/// An intrusive doubly linked list of ``EventToken`` nodes in subscription order.
///
/// O(1) append and O(1) remove given the node; the list owns its nodes through `next`. Only ever
/// touched under the bus lock.
struct SubscriberList {
    private(set) var head: EventToken?
    private(set) unowned(unsafe) var tail: EventToken?  // unowned(unsafe): `head`'s `next` chain owns it
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ node: EventToken) {
        node.previous = tail
        node.next = nil
        if let tail { tail.next = node } else { head = node }
        tail = node
        count += 1
    }

    /// Unlinks `node`, which must be in this list. The caller keeps `node` alive past the call.
    mutating func remove(_ node: EventToken) {
        if let previous = node.previous { previous.next = node.next } else { head = node.next }
        if let next = node.next { next.previous = node.previous } else { tail = node.previous }
        node.previous = nil
        node.next = nil
        count -= 1
    }

    /// Calls `body` on every node, in order; `body` may remove the node it is given.
    func forEach(_ body: (EventToken) -> Void) {
        var cursor = head
        while let node = cursor {
            cursor = node.next
            body(node)
        }
    }
}
