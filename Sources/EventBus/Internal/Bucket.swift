/// Everything subscribed to one event type on one bus: the unkeyed list and one list per key.
///
/// Touched only under the bus lock. A bucket whose lists are all empty waits in the index's queue
/// of empty buckets and is removed unless it is used again meanwhile (see `TypeIndex`).
final class Bucket {
    let typeID: ObjectIdentifier
    @exclusivity(unchecked) var unkeyed = SubscriberList()
    @exclusivity(unchecked) var keyed: [String: SubscriberList] = [:]
    /// Live subscriptions (primaries): `subscriptionCount(of:)` in O(1).
    @exclusivity(unchecked) var subscriptionCount = 0
    /// What the event type adds to the bus (the NotificationCenter bridge's hooks); set at creation.
    let hooks: (any EventTypeHooks)?
    /// Whether the bucket is in the index's queue of empty buckets, and when it was queued.
    @exclusivity(unchecked) var emptySince: UInt64?

    init(typeID: ObjectIdentifier, hooks: (any EventTypeHooks)?) {
        self.typeID = typeID
        self.hooks = hooks
    }

    /// Whether no node (live or pinned) is linked in any list.
    var isEmpty: Bool { unkeyed.isEmpty && keyed.isEmpty }

    /// The first node of the list of `key` (`nil`: the unkeyed list).
    func head(of key: String?) -> SubscriptionNode? {
        guard let key else { return unkeyed.head }
        return keyed[key]?.head
    }

    /// ``head(of:)``, without the reference counting of a strong load (for walks under the lock).
    @inline(__always)
    // Unmanaged: only used under the lock, while the list keeps the node alive.
    func unmanagedHead(of key: String?) -> Unmanaged<SubscriptionNode>? {
        head(of: key).map { Unmanaged.passUnretained($0) }  // Unmanaged: see above
    }

    func append(_ node: SubscriptionNode) {
        if let key = node.key {
            keyed[key, default: SubscriberList()].append(node)
        } else {
            unkeyed.append(node)
        }
    }

    /// Unlinks `node`; returns `true` if that emptied the list of its key.
    func remove(_ node: SubscriptionNode) -> Bool {
        guard let key = node.key else {
            unkeyed.remove(node)
            return false
        }
        keyed[key]?.remove(node)
        guard keyed[key]?.isEmpty == true else { return false }
        keyed[key] = nil
        return true
    }
}
