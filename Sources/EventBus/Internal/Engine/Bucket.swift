/// Everything one event type has on one bus: its subscriber lists (unkeyed, and per key, each by
/// level), what the type adds (hooks, supertypes), and its sticky events.
///
/// Touched only under the bus lock. A bucket whose lists are all empty, and which holds nothing
/// else, waits in the registry's queue of empty buckets and is removed unless it is used again
/// meanwhile (see `Registry`).
final class Bucket {
    let typeID: ObjectIdentifier
    // @exclusivity(unchecked) on every `var` here: a bucket is only touched under the bus lock, which
    // already excludes overlapping access (the runtime's dynamic checks would cost more than the work).
    @exclusivity(unchecked) private var unkeyed = LeveledLists()
    /// The lists of each key: a map that shrinks as keys go (see `IncrementalMap`).
    @exclusivity(unchecked) private var keyed = IncrementalMap<String, LeveledLists>()
    /// Live subscriptions (primaries): `subscriptionCount(of:)` in O(1).
    @exclusivity(unchecked) var subscriptionCount = 0
    /// How many of them are internal (`markedInternal()`): left out of the public counts.
    @exclusivity(unchecked) var internalCount = 0
    /// What the event type adds to the bus (the NotificationCenter bridge's hooks); set at creation.
    let hooks: (any EventTypeHooks)?
    /// The supertypes the event type is also delivered as; set at creation.
    let supertypes: (any SupertypeDelivering)?
    /// The type's sticky events, made by the first sticky dispatch.
    @exclusivity(unchecked) var sticky: StickyStore?
    /// Whether the bucket is in the registry's queue of empty buckets, and when it was queued.
    @exclusivity(unchecked) var emptySince: UInt64?
    /// Bit `2 * l` is set while a node (live or pinned) is linked at level `l`, keyed or not: a
    /// dispatch skips the other levels without looking at their lists. (Spread out, the bits are
    /// ready for the walk's own mask, which gives each level a bit for the key's list and one for
    /// the unkeyed list; see `Dispatch.lists`.)
    @exclusivity(unchecked) private(set) var levelBits: UInt16 = 0
    /// Nodes linked per level (inline: no allocation per bucket).
    @exclusivity(unchecked) private var levelCounts = SIMD8<Int32>()
    /// Nodes linked (live or pinned, primaries and siblings), at every level: the sum of
    /// `levelCounts`, kept rather than summed because a dispatch reads it (summing cost every
    /// dispatch 7 instructions, measured).
    @exclusivity(unchecked) private(set) var linkedCount = 0

    /// Whether the type has neither hooks nor supertypes (a dispatch reads neither then).
    let isPlain: Bool
    init(typeID: ObjectIdentifier, hooks: (any EventTypeHooks)?, supertypes: (any SupertypeDelivering)?) {
        self.typeID = typeID
        self.hooks = hooks
        self.supertypes = supertypes
        isPlain = hooks == nil && supertypes == nil
    }

    /// Whether no node (live or pinned) is linked in any list.
    var isEmpty: Bool { levelBits == 0 }

    /// The slots of the table of keys (tests of its shrinking).
    var keyedCapacity: Int { keyed.capacity }

    /// Whether the bucket holds nothing it must keep: no node, no sticky event, and nothing the
    /// event type adds (those buckets stay for the bus's life, one per such type).
    var isRemovable: Bool { isEmpty && hooks == nil && supertypes == nil && (sticky?.isEmpty ?? true) }

    /// The first node of the list of `key` (`nil`: the unkeyed list) at `level`, without the
    /// reference counting of a strong load (for walks under the lock).
    @inline(__always)
    // Unmanaged: only used under the lock, while the list keeps the node alive.
    func unmanagedHead(of key: String?, at level: DeliveryLevel) -> Unmanaged<SubscriptionNode>? {
        guard let key else { return unkeyed.head(at: level) }
        return keyedHead(of: key, at: level)
    }

    /// `unmanagedHead(of:at:)` of a key: out of line, so that the dispatch path it is inlined into
    /// does not carry the hash table's probe loop (3 instructions more for every dispatch nobody
    /// receives, measured).
    @inline(never)
    // Unmanaged: as `unmanagedHead(of:at:)`.
    private func keyedHead(of key: String, at level: DeliveryLevel) -> Unmanaged<SubscriptionNode>? {
        keyed.index(forKey: key)?.value.pointee.head(at: level)
    }

    /// Links `node` in the lists of its key; an emptied table of keys goes to `after`.
    func append(_ node: SubscriptionNode, after: inout AfterUnlock) {
        if let key = node.key {
            keyed.value(forKey: key, default: LeveledLists()).pointee.append(node)
            if let spent = keyed.takeSpentTable() { after.release(spent) }
        } else {
            unkeyed.append(node)
        }
        let level = node.level.index
        levelCounts[level] += 1
        linkedCount += 1
        levelBits |= 1 << (2 * level)
    }

    /// Unlinks `node`, whose list's reference goes to `after` (released after unlocking), as
    /// does an emptied table of keys; returns `true` if that emptied the lists of its key.
    func remove(_ node: SubscriptionNode, after: inout AfterUnlock) -> Bool {
        let level = node.level.index
        levelCounts[level] -= 1
        linkedCount -= 1
        if levelCounts[level] == 0 { levelBits &= ~(1 << (2 * level)) }
        guard let key = node.key else {
            after.adopt(unkeyed.remove(node))
            return false
        }
        guard let index = keyed.index(forKey: key) else { return false }
        after.adopt(index.value.pointee.remove(node))
        guard index.value.pointee.isEmpty else { return false }
        keyed.remove(at: index)
        if let spent = keyed.takeSpentTable() { after.release(spent) }
        return true
    }

    /// Unlinks every node and hands it to `body` (with `after`), then its list's reference to
    /// `after` (the bus is being deallocated).
    func drain(into after: inout AfterUnlock, _ body: (SubscriptionNode, inout AfterUnlock) -> Void) {
        for level in 0..<DeliveryLevel.count {
            let level = DeliveryLevel(rawValue: UInt8(level))
            keyed.forEachValue { lists in Self.drain(from: lists.pointee.head(at: level), into: &after, body) }
            Self.drain(from: unkeyed.head(at: level), into: &after, body)
        }
        keyed = IncrementalMap()
        unkeyed = LeveledLists()
        levelCounts = SIMD8<Int32>()
        linkedCount = 0
        levelBits = 0
    }

    private static func drain(
        // Unmanaged: `head` is a list's first link; the list holds a reference to each of its nodes.
        from head: Unmanaged<SubscriptionNode>?, into after: inout AfterUnlock,
        _ body: (SubscriptionNode, inout AfterUnlock) -> Void
    ) {
        var cursor = head
        while let link = cursor {
            // Unmanaged: the list's reference (see `SubscriberList`), handed to `after`.
            let node = link.takeUnretainedValue()
            cursor = node.next
            node.next = nil
            node.previous = nil
            node.isLinked = false
            body(node, &after)
            after.adopt(link)
        }
    }
}

extension Bucket {
    /// Whether a live subscription of `key` (`nil`: of no key) or of no key is linked, at any
    /// level. Walks past the ended nodes that are still linked (pinned by a walk), a few at most.
    func hasLiveSubscription(forKey key: String?) -> Bool {
        for level in 0..<DeliveryLevel.count where levelBits & (1 << (2 * level)) != 0 {
            let level = DeliveryLevel(rawValue: UInt8(level))
            if let key, Self.hasLive(from: unmanagedHead(of: key, at: level)) { return true }
            if Self.hasLive(from: unmanagedHead(of: nil, at: level)) { return true }
        }
        return false
    }

    // Unmanaged: under the lock, linked nodes are kept alive by their list.
    private static func hasLive(from head: Unmanaged<SubscriptionNode>?) -> Bool {
        var cursor = head
        while let node = cursor {
            let (isLive, next) = node._withUnsafeGuaranteedRef { ($0.isLive, $0.next) }
            if isLive { return true }
            cursor = next
        }
        return false
    }
}
