import Dispatch

/// The bus's index: event type → (key → subscriber list), behind one lock.
///
/// Every method decides under the lock and returns; objects the index lets go of (handlers,
/// snapshots, nodes) are released by the caller after unlocking, so no user code — not even a
/// captured value's `deinit` — runs while the lock is held.
final class Registry: Sendable {
    /// A subscribe request, filled by the makers. Not generic: the index's subscribe path runs
    /// unspecialized in the caller's module, where every generic metadata access is a runtime
    /// look-up (about 300 instructions); the request pays for the one it needs, `Handler<E>`, once.
    struct Request {
        var eventTypeID: ObjectIdentifier
        var keys: [String]
        var mode: DeliveryMode
        var owner: AnyObject?
        var isOwned: Bool
        /// The `Handler<E>`.
        var handler: any Sendable

        init<E: Event>(_: E.Type, keys: [String], mode: DeliveryMode, owner: AnyObject?, isOwned: Bool, handler: Handler<E>) {
            eventTypeID = ObjectIdentifier(E.self)
            self.keys = keys
            self.mode = mode
            self.owner = owner
            self.isOwned = isOwned
            self.handler = handler
        }
    }

    private let index = Locked(Index())

    /// Per-bus settings for event types with hooks, opaque to the core (the NotificationCenter
    /// bridge keeps the bus's center here). Immutable.
    let hookConfiguration: (any Sendable)?

    init(hookConfiguration: (any Sendable)? = nil) {
        self.hookConfiguration = hookConfiguration
        // The buckets of event types that come with hooks exist from the start, so that the first
        // dispatch of such a type already goes through its hooks.
        let hooked = Self.builtInHookedEvents.map { type in
            (ObjectIdentifier(type), type.makeHookedBucket(for: self))
        }
        index.withLock { index in
            for (typeID, bucket) in hooked { index.buckets[typeID] = bucket }
        }
    }

    deinit {
        // The bus is gone: end every subscription (so queued deliveries do not start) and release
        // the handlers, which `retired` drops when this deinit returns, with no lock held.
        // Nodes are unlinked too: a token the user still holds must not keep the rest of its list
        // alive through `next`.
        var retired = Retired()
        index.withLock { index in
            for bucket in index.buckets.values {
                var nodes: [EventToken] = []
                bucket.forEachNode { nodes.append($0) }
                for node in nodes {
                    _ = node.end()
                    bucket.remove(node, retired: &retired)
                    if let handler = node.handlerStorage.take() { retired.add(handler) }
                    retired.add(node)
                }
            }
        }
        withExtendedLifetime(retired) {}
    }

    /// Registers a subscription and returns its token. O(1) for each key.
    ///
    /// `makeBucket` makes the `Bucket<E>` if this is the first subscription to the type.
    func subscribe(_ request: Request, makeBucket: () -> AnyBucket) -> EventToken {
        var retired = Retired()
        var afterUnlock = AfterUnlock()
        let token = index.withLock { index in
            if index.tick() { index.sweep(retired: &retired) }
            return index.insert(
                request, registry: self, makeBucket: makeBucket, retired: &retired, afterUnlock: &afterUnlock
            )
        }
        settle(retired)
        afterUnlock.run()
        return token
    }

    /// Unlinks a subscription whose token was just disposed. O(1) for each key.
    func remove(_ token: EventToken) {
        var retired = Retired()
        index.withLock { index in
            if index.tick() { index.sweep(retired: &retired) }
            index.unlink(token, retired: &retired)
        }
        settle(retired)
    }

    /// The snapshots a dispatch of `E` with `key` iterates, or `nil` if nothing subscribes to `E`.
    /// One lock acquisition; allocates nothing unless a snapshot must be rebuilt after a change.
    ///
    /// If `E` has hooks (and `bypassingHooks` is `false`), returns no snapshots and `isHooked`:
    /// the caller hands the event to ``hooks(for:)`` instead. (Returning the hooks themselves would
    /// save that lock acquisition on the rare bridged path, but the generic `EventHooks<E>?` in the
    /// result costs every dispatch a runtime metadata look-up: +90 instructions, measured.) Sets `sweepDue` when the periodic
    /// sweep is due: the caller runs it (``purge()``) after this returns, so a dispatch never
    /// retires anything itself.
    @inline(__always)
    func snapshots<E: Event>(
        for _: E.Type, key: String?, bypassingHooks: Bool = false, sweepDue: inout Bool
    ) -> (keyed: Bucket<E>.Snapshot?, unkeyed: Bucket<E>.Snapshot, isHooked: Bool)? {
        index.withLock { index in
            sweepDue = index.tick()
            guard let bucket = index.bucket(for: ObjectIdentifier(E.self)) else { return nil }
            if !bypassingHooks, bucket.hooks != nil { return (nil, Bucket<E>.Snapshot(), true) }
            // Buckets are filed under `ObjectIdentifier(E.self)` only as `Bucket<E>` (by
            // `Index.bucket(for:orMake:)`, from `insert`, `init` and `installHooks`).
            let (keyed, unkeyed) = unsafeDowncast(bucket, to: Bucket<E>.self).snapshots(for: key)
            return (keyed, unkeyed, false)
        }
    }

    /// Calls the subscribers in `keyed`, then those in `unkeyed`, as `dispatch` does, and reclaims
    /// the subscriptions whose owner turned out to be gone. Runs with no lock held.
    @inline(__always)
    func fanOut<E: Event>(_ event: E, keyed: Bucket<E>.Snapshot?, unkeyed: Bucket<E>.Snapshot) {
        var ownerDied = false
        if let keyed {
            for delivery in keyed where !delivery.deliver(event) { ownerDied = true }
        }
        for delivery in unkeyed where !delivery.deliver(event) { ownerDied = true }
        if ownerDied { reapDeadOwners(of: E.self) }
    }

    /// Delivers `event` to the subscribers of `key` (and, if `includingUnkeyed`, to the unkeyed
    /// ones), bypassing `E`'s hooks: how hooks hand an event to the bus's subscribers.
    func deliver<E: Event>(_ event: E, key: String?, includingUnkeyed: Bool = true) {
        var sweepDue = false
        let route = snapshots(for: E.self, key: key, bypassingHooks: true, sweepDue: &sweepDue)
        if sweepDue { purge() }
        guard let (keyed, unkeyed, _) = route else { return }
        fanOut(event, keyed: keyed, unkeyed: includingUnkeyed ? unkeyed : Bucket<E>.Snapshot())
    }

    /// The hooks of `E` on this bus, if it has any.
    func hooks<E: Event>(for _: E.Type) -> EventHooks<E>? {
        index.withLock { index in
            // Hooks on the bucket of `E` are `EventHooks<E>` (see `init` and `installHooks`).
            index.bucket(for: ObjectIdentifier(E.self))?.hooks.map { unsafeDowncast($0, to: EventHooks<E>.self) }
        }
    }

    /// Gives `E` hooks on this bus, made by `make` (under the lock: it must not run user code),
    /// unless it already has some; returns the hooks `E` has afterwards, or `nil` if it has hooks
    /// of another kind.
    func installHooks<E: Event, Hooks: EventHooks<E>>(for _: E.Type, _ make: () -> Hooks) -> Hooks? {
        index.withLock { index in
            let bucket = index.bucket(for: ObjectIdentifier(E.self), orMake: { Bucket<E>() })
            if let hooks = bucket.hooks { return hooks as? Hooks }
            let hooks = make()
            bucket.hooks = hooks
            return hooks
        }
    }

    /// Removes the subscriptions of `E` whose owner has been deallocated.
    func reapDeadOwners<E: Event>(of _: E.Type) {
        var retired = Retired()
        index.withLock { index in
            guard let bucket = index.bucket(for: ObjectIdentifier(E.self)) else { return }
            index.reapDeadOwners(in: bucket, retired: &retired)
        }
        settle(retired)
    }

    /// Removes every subscription whose owner has been deallocated.
    func purge() {
        var retired = Retired()
        index.withLock { $0.sweep(retired: &retired) }
        settle(retired)
    }

    /// Releases what the index let go of under the lock — call it with no lock held — and, if the
    /// sweep parked owners, releases them too.
    func settle(_ retired: consuming Retired) {
        if retired.ownersParked { releaseParkedOwners() }
        _ = consume retired
    }

    /// Releases the owners the sweep read under the lock (see `Index.parkedOwners`), outside the
    /// lock, and hands the emptied buffer back so the next sweep does not allocate.
    private func releaseParkedOwners() {
        var parked = index.withLock { index in
            var parked = ContiguousArray<AnyObject>()
            swap(&parked, &index.parkedOwners)
            return parked
        }
        parked.removeAll(keepingCapacity: true)  // an owner's last reference may go here: no lock held
        index.withLock { index in
            if index.parkedOwners.isEmpty && index.parkedOwners.capacity < parked.capacity {
                swap(&parked, &index.parkedOwners)
            }
        }
    }

    /// The number of event types with an entry (a bucket) in the index; for tests (see
    /// `EventBus._bucketCountForTesting`).
    func bucketCount() -> Int {
        index.withLock { $0.buckets.count }
    }

    /// The number of registered subscriptions, or of those to `typeID` only.
    func count(of typeID: ObjectIdentifier? = nil) -> Int {
        index.withLock { index in
            guard let typeID else { return index.subscriptionCount }
            return index.buckets[typeID].map { bucket in
                var primaries = 0
                bucket.forEachNode { if $0.primary == nil { primaries += 1 } }
                return primaries
            } ?? 0
        }
    }
}

/// The state behind the registry's lock.
struct Index {
    var buckets: [ObjectIdentifier: AnyBucket] = [:]
    /// A small direct-mapped cache in front of `buckets` for the lookups of dispatch, subscribe and
    /// dispose: hashing an `ObjectIdentifier` (SipHash) costs more than the rest of a dispatch to
    /// one subscriber. Buckets are never removed from `buckets`, so an entry never goes stale.
    private var recentBuckets = ContiguousArray<(typeID: ObjectIdentifier, bucket: AnyBucket)?>(
        repeating: nil, count: Index.recentBucketsCount
    )
    private static let recentBucketsCount = 32  // a power of two

    /// The bucket of `typeID`, if any: `buckets[typeID]`, through the cache.
    @inline(__always)
    mutating func bucket(for typeID: ObjectIdentifier) -> AnyBucket? {
        // Type metadata is word-aligned: drop the low bits, fold in some higher ones.
        let bits = UInt(bitPattern: typeID)
        let slot = Int(truncatingIfNeeded: (bits >> 4) ^ (bits >> 11)) & (Self.recentBucketsCount - 1)
        if let recent = recentBuckets[slot], recent.typeID == typeID { return recent.bucket }
        guard let bucket = buckets[typeID] else { return nil }
        recentBuckets[slot] = (typeID, bucket)
        return bucket
    }

    /// The bucket of `typeID`, made by `make` (a `Bucket<E>` for that type) if there is none yet.
    /// Buckets are never removed.
    @inline(__always)
    mutating func bucket(for typeID: ObjectIdentifier, orMake make: () -> AnyBucket) -> AnyBucket {
        if let bucket = bucket(for: typeID) { return bucket }
        let bucket = make()
        buckets[typeID] = bucket
        return bucket
    }
    private(set) var subscriptionCount = 0
    /// Subscription ids come from this counter; 0 is reserved for inert tokens.
    private var nextID: UInt64 = 1
    private var operationsSinceSweep = 0
    /// Owners the sweep read, and so retained, under the lock. Releasing one there could run its
    /// `deinit` under the lock (if another thread dropped the last other reference meanwhile), so
    /// they wait here for `Registry.settle`, which releases them after unlocking. The buffer keeps
    /// its capacity between sweeps: a sweep allocates nothing in steady state.
    var parkedOwners = ContiguousArray<AnyObject>()

    /// The amortised sweep: every `max(256, subscriptionCount)` bus operations, subscriptions whose
    /// owner is gone are removed. O(subscriptions) every that many operations: O(1) amortised.
    static let minimumSweepInterval = 256

    /// Counts one bus operation; returns `true` when the sweep is due (the caller runs it).
    mutating func tick() -> Bool {
        operationsSinceSweep &+= 1
        guard operationsSinceSweep >= Swift.max(Self.minimumSweepInterval, subscriptionCount) else { return false }
        operationsSinceSweep = 0
        return true
    }

    mutating func sweep(retired: inout Retired) {
        operationsSinceSweep = 0
        for bucket in buckets.values { reapDeadOwners(in: bucket, retired: &retired) }
    }

    /// Unlinks the subscriptions in `bucket` whose owner is gone. Live owners read on the way are
    /// parked (see `parkedOwners`) and `retired` is marked so the caller's `settle` releases them.
    mutating func reapDeadOwners(in bucket: AnyBucket, retired: inout Retired) {
        var dead: [EventToken] = []  // allocates only when an owner has died
        let parkedBefore = parkedOwners.count
        bucket.forEachNode { node in
            guard node.isOwned, node.isLinked else { return }
            if let owner = node.owner {
                parkedOwners.append(owner)
            } else {
                dead.append(node.subscription)
            }
        }
        if parkedOwners.count > parkedBefore { retired.ownersParked = true }
        // Unlinked after the walk, which must not change the lists it walks. A subscription with
        // several keys may be listed once per key: `unlink` ignores the repeats.
        for subscription in dead {
            _ = subscription.end()
            unlink(subscription, retired: &retired)
            retired.add(subscription)
        }
    }

    mutating func insert(
        _ request: Registry.Request, registry: Registry, makeBucket: () -> AnyBucket,
        retired: inout Retired, afterUnlock: inout AfterUnlock
    ) -> EventToken {
        let typeID = request.eventTypeID
        let bucket = bucket(for: typeID, orMake: makeBucket)
        var keys = request.keys
        if let hooks = bucket.hooks {
            guard let admitted = hooks.admit(keys: keys, afterUnlock: &afterUnlock) else {
                return .inert(eventTypeID: typeID)
            }
            keys = admitted
        }
        let id = nextID
        nextID += 1
        func node(key: String?, siblings: [EventToken] = []) -> EventToken {
            EventToken(
                id: id, eventTypeID: typeID, key: key, mode: request.mode,
                owner: request.owner, isOwned: request.isOwned, registry: registry,
                handler: request.handler, siblings: siblings
            )
        }
        // One node per key; the first is the token, the others its siblings. Zero or one key (all
        // but rare subscriptions) takes the path without slicing.
        var siblings: [EventToken] = []
        if keys.count > 1 {
            siblings = keys[1...].map { node(key: $0) }
        }
        let token = node(key: keys.first, siblings: siblings)
        bucket.insert(token, retired: &retired)
        for sibling in siblings {
            sibling.primary = token
            bucket.insert(sibling, retired: &retired)
        }
        subscriptionCount += 1
        if let hooks = bucket.hooks {
            for key in keys { hooks.subscribed(key: key, afterUnlock: &afterUnlock) }
        }
        return token
    }

    /// Unlinks a subscription (a token and its siblings) and ends its siblings. Does nothing for
    /// one that is already unlinked. The handlers go to `retired`.
    mutating func unlink(_ token: EventToken, retired: inout Retired) {
        guard token.isLinked, let bucket = bucket(for: token.eventTypeID) else { return }
        func unlink(_ node: EventToken) {
            _ = node.end()
            bucket.remove(node, retired: &retired)
            if let handler = node.handlerStorage.take() { retired.add(handler) }
        }
        unlink(token)
        token.siblings.forEach(unlink)
        subscriptionCount -= 1
    }
}
