import Dispatch

/// A bus's subscriptions: the ``TypeIndex`` behind one lock, and the operations on it.
///
/// Every method decides under the lock and acts after unlocking: handlers run, and objects the
/// index let go of are released, with no lock held.
final class SubscriptionIndex: SubscriptionContainer {
    private let state = Locked(TypeIndex())

    /// Runs `body` under the lock, then settles what it retired.
    @inline(__always)
    func withIndex<R>(_ body: (inout TypeIndex, inout Retired) -> R) -> R {
        var retired = Retired()
        let result = state.withLock { index in body(&index, &retired) }
        retired.settle()
        return result
    }

    /// Registers a subscription and returns its primary node, or `nil` if `E`'s hooks refused it.
    func subscribe<E: Event>(
        _ type: E.Type, keys: [String], body: Body<E>, owner: AnyObject?, isOwned: Bool, bus: EventBus
    ) -> Subscription<E>? {
        var sweep = SweepBatch()
        let node = withIndex { index, retired in
            index.tick(.subscribe, sweep: &sweep, retired: &retired)
            return index.insert(
                E.self, keys: keys, body: body, owner: owner, isOwned: isOwned, bus: bus, anchor: bus.anchor,
                retired: &retired)
        }
        sweep.check(in: self)
        return node
    }

    func remove(_ subscription: SubscriptionHandle) {
        var sweep = SweepBatch()
        withIndex { index, retired in
            index.tick(.dispose, sweep: &sweep, retired: &retired)
            index.end(subscription, retired: &retired)
        }
        sweep.check(in: self)
    }

    func reclaim(_ subscriptions: some Sequence<SubscriptionHandle>) {
        withIndex { index, retired in
            for subscription in subscriptions { index.end(subscription, retired: &retired) }
        }
    }

    func isLive(_ subscription: SubscriptionHandle) -> Bool {
        withIndex { index, _ in index.isLive(subscription) }
    }

    func attach(_ subscription: SubscriptionHandle, to bag: DisposeBag) {
        let attached = withIndex { index, _ in index.attach(subscription, to: bag) }
        if !attached { bag.forget(subscription.id) }
    }

    /// Delivers `event` to the subscribers of `key` (and, if `includingUnkeyed`, to the unkeyed
    /// ones), unless `E` has hooks and `bypassingHooks` is `false`: then the hooks get it.
    @inline(__always)
    func dispatch<E: Event>(
        _ event: E, key: String?, on bus: EventBus, bypassingHooks: Bool = false, includingUnkeyed: Bool = true
    ) {
        let typeID = ObjectIdentifier(E.self)
        withUnsafeTemporaryAllocation(of: Unmanaged<SubscriptionNode>.self, capacity: DispatchPlan.chunkCapacity) {
            chunk in
            var plan = DispatchPlan(key: key, includingUnkeyed: includingUnkeyed, chunk: chunk)
            var sweep = SweepBatch()
            let route: Route = withIndex { index, retired in
                index.tick(.dispatch, sweep: &sweep, retired: &retired)
                guard let bucket = index.bucket(for: typeID) else {
                    return !bypassingHooks && index.isHooked(E.self) ? .unmadeHooks : .nothing
                }
                if let hooks = bucket.hooks, !bypassingHooks { return .hooks(hooks) }
                plan.start(in: bucket, lastID: index.lastID, index: &index, retired: &retired)
                return .plan
            }
            switch route {
            case .plan:
                withUnsafePointer(to: event) { plan.run($0, in: self) }
            case .hooks(let hooks):
                hooks.dispatch(event)
            case .unmadeHooks:
                // A hooked type (the bridge's) routes through its hooks even with no subscriber.
                hooks(of: E.self, on: bus).dispatch(event)
            case .nothing:
                break
            }
            sweep.check(in: self)
        }
    }

    private enum Route {
        /// Deliver to the subscribers the plan holds.
        case plan
        /// No subscriber, no hooks.
        case nothing
        /// Hand the event to the type's hooks.
        case hooks(any EventTypeHooks)
        /// The type has hooks, not made yet on this bus.
        case unmadeHooks
    }

    /// The hooks of `E` on this bus, making its bucket if needed; `E` must be a ``HookedEvent``.
    func hooks<E: Event>(of _: E.Type, on bus: EventBus) -> any EventTypeHooks {
        let hooks = withIndex { index, _ in index.bucket(for: E.self, on: bus).hooks }
        guard let hooks else { preconditionFailure("EventBus: \(E.self) is not a hooked event type") }
        return hooks
    }

    /// Reclaims every subscription whose owner is gone, a bounded batch per lock acquisition.
    /// Owners of main-bound subscriptions are only checked on the main queue: off it, a pass there
    /// is scheduled.
    func purge() {
        let onMain = isOnMainQueue
        var remaining = withIndex { index, _ in index.ownedCount }
        var nodes = ContiguousArray<SubscriptionNode>()
        while remaining > 0 {
            let batch = Swift.min(remaining, 256)
            remaining -= batch
            withIndex { index, _ in index.takeForPurge(limit: batch, into: &nodes, onMain: onMain) }
            // Eagerly, with no lock held: loading an owner may release its last reference.
            let dead = nodes.filter(SweepBatch.ownerIsGone).map(\.handle)
            if !dead.isEmpty { reclaim(dead) }
            nodes.removeAll(keepingCapacity: true)
            Locked<TypeIndex>.yieldToWaiters()
        }
        if !onMain { scheduleMainSweep(force: true) }
    }

    /// Schedules a purge on the main queue (unless one is scheduled), where main-bound owners may
    /// be checked. `force`: even if the sweep has not skipped a full turn's worth of them yet.
    func scheduleMainSweep(force: Bool = false) {
        let due = force ? withIndex { index, _ in index.mainSweepDue(force: true) } : true
        guard due else { return }
        DispatchQueue.main.async { [weak self] in
            guard let self else { return }
            withIndex { index, _ in index.mainSweepScheduled = false }
            purge()
        }
    }

    /// The number of live subscriptions. O(1).
    var count: Int { withIndex { index, _ in index.subscriptionCount } }

    /// The number of live subscriptions to `E`. O(1).
    func count<E: Event>(of _: E.Type) -> Int {
        withIndex { index, _ in index.bucket(for: ObjectIdentifier(E.self))?.subscriptionCount ?? 0 }
    }

    /// See `TypeIndex.dispatchesPerSweepTurn`.
    var dispatchesPerSweepTurn: Int { withIndex { index, _ in index.dispatchesPerSweepTurn } }

    /// The number of event types with a bucket (tests of bucket removal).
    var bucketCount: Int { withIndex { index, _ in index.bucketCount } }

    /// Ends every subscription (the bus is being deallocated): queued deliveries will not start.
    func removeAll() {
        withIndex { index, retired in index.removeAll(retired: &retired) }
    }
}
