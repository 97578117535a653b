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

    /// The registry's ``Registry/typeSummary``, read without the lock.
    let typeSummary: AtomicCounter

    /// The registry's ``Registry/unhookedTypes``, read without the lock.
    let unhookedTypes: TypeIDCache

    /// Dispatches that skipped the lock (``findsNothing(_:)``): every `idleTickInterval`th takes it
    /// anyway, to do the bookkeeping of them all (their share of the sweep).
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

    /// 1 while a context propagator is set (see `BusCore+Context.swift`), else 0: what a delivery
    /// that leaves the dispatching thread reads when no propagator is set. Written under the lock.
    let propagates = AtomicCounter()

    init(clock: StickyClock) {
        let registry = Registry(clock: clock)
        mailboxes = MailboxDirectory(inFlight: inFlight)
        typeSummary = registry.typeSummary
        unhookedTypes = registry.unhookedTypes
        state = Locked(registry)
    }

    /// Whether `typeID` may have a bucket, without the lock: `false` means it had none when the
    /// last change made before this call (in happens-before order) was made. O(1), an atomic load.
    @inline(__always)
    func mayHaveBucket(_ typeID: ObjectIdentifier) -> Bool {
        typeSummary.current & (1 << Registry.summaryBit(of: typeID)) != 0
    }

    /// Whether a plain dispatch of `typeID` would find nothing to do, without the lock: the type had
    /// no bucket (so no subscriber and nothing kept) and no dead-event handler or tracer was set
    /// when the last change made before this call (in happens-before order) was made, and it has
    /// neither hooks nor supertypes (which would need a bucket made). O(1), two atomic loads.
    @inline(__always)
    func findsNothing(_ typeID: ObjectIdentifier) -> Bool {
        !mayHaveBucket(typeID) && unhookedTypes.contains(typeID)
    }

    /// Runs `body`'s registry operations under the lock, then performs what they left to do after
    /// unlocking (``AfterUnlock``), and returns what `body` returned.
    @inline(__always)
    func withRegistry<R>(_ body: (inout Registry) -> R) -> R {
        var (result, after) = state.withLock { registry in (body(&registry), registry.takeAfterUnlock()) }
        after.perform(in: self)
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
        after.perform(in: self)
        return result
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
            propagates.store(0)
        }
    }
}
