import Dispatch

/// A bus's subscriptions: the executor of its ``Registry`` — the registry behind one lock, and one
/// way to act on what an operation decided.
///
/// Every method calls the registry's operations under the lock (``withRegistry(_:)``), and acts
/// after unlocking on what they returned (a route to deliver along, events to replay, a value to
/// read) and on what they left in the registry's ``AfterUnlock`` (performed by `withRegistry`
/// itself): handlers run, and objects the registry let go of are released, with no lock held.
@usableFromInline
final class BusCore: Sendable {
    private let state: Locked<Registry>
    /// What the core reads of the registry without the lock, published by the registry.
    let snapshot: RegistrySnapshot
    /// Dispatches that skipped the lock (``RegistrySnapshot/findsNothing(_:)``): every
    /// `idleTickInterval`th takes it anyway, to do the bookkeeping of them all (their share of the
    /// sweep).
    let idleDispatches = AtomicCounter()
    static let idleTickInterval = 8
    /// Deliveries enqueued on a queue, the main queue or an actor that have not run yet.
    let inFlight = InFlightDeliveries()
    /// The bus's mailboxes by queue and by actor (DESIGN §15).
    let mailboxes: MailboxDirectory
    /// The bus's back-pressure lanes, for ``EventBus/send(_:)``.
    let backPressure = BackPressureRoutes()
    /// Deliveries dropped by a subscription's bound, from the start (``EventBus/droppedDeliveryCount``).
    let droppedDeliveries = AtomicCounter()
    /// Enqueued deliveries that ended without running: their subscription had ended, their owner
    /// or bus was gone, or their stream was cancelled.
    let endedUnrunDeliveries = AtomicCounter()
    /// Deliveries offered to a mailbox (enqueued, or dropped by the bound on the way in): the left
    /// side of the flow-control invariant its tests check. Counted in debug builds only (an atomic
    /// per delivery); 0 in release builds.
    let offeredDeliveries = AtomicCounter()

    init(clock: StickyClock) {
        let registry = Registry(clock: clock)
        mailboxes = MailboxDirectory(inFlight: inFlight)
        snapshot = registry.snapshot
        state = Locked(registry)
    }

    /// 1 while a context propagator is set (see `BusCore+Context.swift`), else 0: what a delivery
    /// that leaves the dispatching thread reads when no propagator is set.
    var propagates: AtomicCounter { snapshot.propagates }

    /// Runs `body`'s registry operations under the lock, then performs what they left to do after
    /// unlocking (``AfterUnlock``, interpreted by ``perform(_:)``), and returns what `body`
    /// returned.
    @inline(__always)
    func withRegistry<R>(_ body: (inout Registry) -> R) -> R {
        var (result, after) = state.withLock { registry in (body(&registry), registry.takeAfterUnlock()) }
        perform(&after)
        return result
    }

    /// ``withRegistry(_:)`` for operations expected to let go of up to `capacity` objects, for
    /// which room is made before locking (an allocation under the lock would make every thread
    /// waiting for it wait for the allocator too).
    func withRegistry<R>(reserving capacity: Int, _ body: (inout Registry) -> R) -> R {
        let prepared = AfterUnlock(capacity: capacity)
        var (result, after) = state.withLock { registry in
            registry.reserveAfterUnlock(prepared)
            return (body(&registry), registry.takeAfterUnlock())
        }
        perform(&after)
        return result
    }

    // MARK: The interpreter of what operations leave for after the lock

    /// Does what the registry's operations left in `after`, with no lock held (the carrier hands
    /// itself over, ``AfterUnlock/hand(to:)``: the common cases, nothing or one object to release,
    /// cost a few loads and no call).
    @inline(__always)
    func perform(_ after: inout AfterUnlock) {
        after.hand(to: self)
    }

    /// The interpreter: tells the bags and runs the work in the order they came, hands the tracer
    /// its records, checks the picked owners (reclaiming the subscriptions whose owner is gone,
    /// scheduling a main-queue pass if due), then releases the objects through ``ReleaseLoop``
    /// (their deinits may call the bus).
    func interpret(_ after: inout AfterUnlock) {
        var dead: [SubscriptionHandle] = []  // a purge's: reclaimed together
        for entry in after.entries {
            switch entry {
            case .object: break  // released with the others, last
            case .bag(let bag, let id): bag.forget(id)
            case .work(let body): body()
            case .check(let node): if Self.ownerIsGone(node) { dead.append(node.handle) }
            case .trace(let node, let reason, let tracer):
                let record = { () -> TraceRecord in
                    reason.map { .ended(AfterUnlock.end(of: node, reason: $0)) } ?? .subscribed(node.info())
                }
                if let tracer { tracer(record()) } else { trace(record()) }
            }
        }
        if after.mainSweepDue { scheduleMainSweep() }
        let (firstPicked, secondPicked) = after.takePicks()
        // One at a time, without allocating (an array of the two would be an allocation a reclaim).
        if let node = firstPicked, Self.ownerIsGone(node) { reclaim(CollectionOfOne(node.handle)) }
        if let node = secondPicked, Self.ownerIsGone(node) { reclaim(CollectionOfOne(node.handle)) }
        if !dead.isEmpty { reclaim(dead) }
        // Often the last references: their deinits may call the bus, whose sweep may reclaim more.
        let (first, more) = after.takeObjects()
        ReleaseLoop.drop((consume first, consume more, consume firstPicked, consume secondPicked))
    }

    /// Whether `node` is live and its owner gone. (Loading the owner retains it: call it with no
    /// lock held, and for a main-bound owner only on the main queue.)
    static func ownerIsGone(_ node: SubscriptionNode) -> Bool {
        node.isLive && node.owner == nil
    }

    /// Ends and forgets `subscriptions`, whose owner was found gone. The sequence is iterated
    /// under the bus's lock: it must not run user code (no owner loads in a lazy filter).
    func reclaim(_ subscriptions: some Sequence<SubscriptionHandle>) {
        withRegistry(reserving: subscriptions.underestimatedCount) { registry in
            for subscription in subscriptions { registry.end(subscription, reason: .ownerGone) }
        }
    }

    /// Ends every subscription (the bus is being deallocated): queued deliveries will not start.
    /// Tokens and enqueued deliveries may keep the emptied registry alive after the bus: it lets go
    /// of the bus's tracer and handlers too (released here, after unlocking).
    func removeAll() {
        withRegistry { registry in
            registry.removeAll()
        }
    }
}
