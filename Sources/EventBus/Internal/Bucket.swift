/// Everything subscribed to one event type: the unkeyed list, one list per `ofType` key, and the
/// typed snapshots dispatch iterates.
///
/// The non-generic base is what the index manipulates; ``Bucket`` adds the snapshots, which need
/// the event type. Touched only under the bus lock.
class AnyBucket {
    // Touched only under the bus lock, so the runtime's dynamic exclusivity checks are redundant.
    @exclusivity(unchecked) var unkeyed = SubscriberList()
    @exclusivity(unchecked) var keyed: [String: SubscriberList] = [:]
    /// What the event type adds to the bus (see ``AnyEventHooks``); set once, never replaced.
    var hooks: AnyEventHooks?


    final func insert(_ node: EventToken, retired: inout Retired) {
        node.isLinked = true
        if let key = node.key {
            keyed[key, default: SubscriberList()].append(node)
        } else {
            unkeyed.append(node)
        }
        invalidate(key: node.key, retired: &retired)
    }

    final func remove(_ node: EventToken, retired: inout Retired) {
        node.isLinked = false
        if let key = node.key {
            keyed[key]?.remove(node)
            if keyed[key]?.isEmpty == true {
                keyed[key] = nil
                hooks?.keyEnded(key, retired: &retired)
            }
        } else {
            unkeyed.remove(node)
        }
        invalidate(key: node.key, retired: &retired)
    }

    /// Calls `body` on every node of every list. `body` must not add or remove nodes: collect what
    /// to change, and change it after the walk.
    final func forEachNode(_ body: (EventToken) -> Void) {
        for list in keyed.values { list.forEach(body) }
        unkeyed.forEach(body)
    }

    /// Drops the snapshots that a change to list `key` (`nil`: the unkeyed list) made stale,
    /// moving them to `retired` so they are released after the lock.
    func invalidate(key: String?, retired: inout Retired) {}
}

/// The typed half of a bucket: snapshots of the lists, rebuilt lazily after a change, so that a
/// dispatch in steady state allocates nothing and holds the lock only to copy array references.
final class Bucket<E: Event>: AnyBucket {
    typealias Snapshot = ContiguousArray<Delivery<E>>

    // Under the bus lock, like the lists: no dynamic exclusivity checks.
    @exclusivity(unchecked) private var unkeyedSnapshot: Snapshot?
    @exclusivity(unchecked) private var keyedSnapshots: [String: Snapshot] = [:]

    /// What a dispatch of an event with `key` delivers to, in this order: the subscribers of that
    /// key (in subscription order), then the unkeyed subscribers (in subscription order).
    func snapshots(for key: String?) -> (keyed: Snapshot?, unkeyed: Snapshot) {
        var keyedSnapshot: Snapshot?
        if let key, let list = keyed[key] {
            keyedSnapshot = keyedSnapshots[key] ?? {
                let snapshot = build(list)
                keyedSnapshots[key] = snapshot
                return snapshot
            }()
        }
        let unkeyedSnapshot = self.unkeyedSnapshot ?? {
            let snapshot = build(unkeyed)
            self.unkeyedSnapshot = snapshot
            return snapshot
        }()
        return (keyedSnapshot, unkeyedSnapshot)
    }

    override func invalidate(key: String?, retired: inout Retired) {
        if let key {
            if let stale = keyedSnapshots.removeValue(forKey: key) { retired.add(stale) }
        } else if let stale = unkeyedSnapshot {
            unkeyedSnapshot = nil
            retired.add(stale)
        }
    }

    private func build(_ list: SubscriberList) -> Snapshot {
        var snapshot = Snapshot()
        snapshot.reserveCapacity(list.count)
        list.forEach { node in
            // The index only files a node under `ObjectIdentifier(E.self)` with a `Handler<E>`.
            snapshot.append(Delivery(node: node, handler: node.handlerStorage as! Handler<E>))
        }
        return snapshot
    }
}

/// Objects the index let go of under the lock, released by the caller after unlocking, so that no
/// `deinit` (of a handler's captures, say) runs while the bus lock is held.
///
/// The common cases (a dispose retires one handler and one snapshot) fit inline: no allocation.
struct Retired {
    /// Set when the sweep parked owners in `Index.parkedOwners`: `Registry.settle` releases them.
    var ownersParked = false
    // `any Sendable`, the type handlers are stored as, so retiring one is a move, not a re-boxing.
    private var first: (any Sendable)?
    private var second: (any Sendable)?
    /// `nil` rather than empty, so that a `Retired` nothing was added to (every dispatch's) is
    /// destroyed without a release.
    private var more: [any Sendable]?

    mutating func add(_ object: any Sendable) {
        if first == nil {
            first = object
        } else if second == nil {
            second = object
        } else if more == nil {
            more = [object]
        } else {
            more!.append(object)
        }
    }
}
