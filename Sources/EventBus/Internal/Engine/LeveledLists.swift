/// The subscriber lists of one key (or of the unkeyed subscribers) of a bucket: one list per
/// ``DeliveryLevel``, so that inserting at any priority stays O(1) and a dispatch walks them in
/// order.
///
/// The normal level's list is inline; the others are allocated the first time a subscription uses
/// a priority or `monitor()`, and freed when they are all empty again. Only touched under the lock.
struct LeveledLists {
    private var normal = SubscriberList()
    /// Indexed by level; the slot of the normal level is unused.
    private var others: ContiguousArray<SubscriberList>?
    /// Nodes linked in `others`.
    private var othersCount = 0

    var isEmpty: Bool { normal.isEmpty && others == nil }

    /// The first node at `level` (for walks under the lock, while the list keeps it alive).
    @inline(__always)
    // Unmanaged: see `SubscriberList`.
    func head(at level: DeliveryLevel) -> Unmanaged<SubscriptionNode>? {
        if level == .normal { return normal.head }
        return others?[level.index].head
    }

    @inline(__always)
    mutating func append(_ node: SubscriptionNode) {
        if node.level == .normal {
            normal.append(node)
            return
        }
        if others == nil { others = ContiguousArray(repeating: SubscriberList(), count: DeliveryLevel.count) }
        others![node.level.index].append(node)
        othersCount += 1
    }

    /// Unlinks `node`, which must be in these lists, and hands the list's reference to it to the
    /// caller (see ``SubscriberList``).
    @inline(__always)
    // Unmanaged: the list's own reference to `node`, which the caller must release (`AfterUnlock.adopt`).
    mutating func remove(_ node: SubscriptionNode) -> Unmanaged<SubscriptionNode> {
        if node.level == .normal { return normal.remove(node) }
        let reference = others![node.level.index].remove(node)
        othersCount -= 1
        if othersCount == 0 { others = nil }
        return reference
    }
}
