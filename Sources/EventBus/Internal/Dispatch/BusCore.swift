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
    private let typeSummary: AtomicCounter
    /// The registry's ``Registry/unhookedTypes``, read without the lock.
    private let unhookedTypes: TypeIDCache
    /// Dispatches that skipped the lock (``findsNothing(_:)``): every `idleTickInterval`th takes it
    /// anyway, to do the bookkeeping of them all (their share of the sweep).
    private let idleDispatches = AtomicCounter()
    private static let idleTickInterval = 8
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
    private func findsNothing(_ typeID: ObjectIdentifier) -> Bool {
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

    /// Registers the subscription whose nodes (`primary`, with the other keys' nodes as its
    /// siblings) ``makeNodes(keys:body:traits:owner:callSite:)`` or
    /// ``makePlainNodes(_:keys:handler:traits:callSite:)`` built, and returns its token, an inert one
    /// if `E`'s hooks refused it. `deliversNow`: whether a delivery made on this thread calls the
    /// handler now (evaluated only for a replay).
    ///
    /// With `traits.replaysSticky`, the kept sticky events of `E` and the keys are snapshot in the
    /// same critical section as the registration (so a concurrent dispatch is either replayed or
    /// delivered live, never both, never neither), then delivered: queued and off-main main-actor
    /// deliveries are enqueued before unlocking (so before any live one), the others are called
    /// on this thread before returning. The `.untilDelivered` events it replays are held for it
    /// (see `StickyStore`) until its handler ran for them, or did not (its owner was gone, or it
    /// ended, by the time the delivery ran): those are kept for the next taker. An enqueued one
    /// is held until its queue runs it (``StickyHold``, made under the lock like the enqueued
    /// block itself).
    @usableFromInline
    func subscribe<E: Sendable>(
        _ primary: SubscriptionNode, of _: E.Type, traits: SubscriptionTraits,
        deliversNow: @autoclosure () -> Bool, bus: EventBus
    ) -> EventToken {
        if traits.replaysSticky {
            return subscribeReplaying(primary, of: E.self, traits: traits, deliversNow: deliversNow(), bus: bus)
        }
        let registered = withRegistry { registry in
            registry.tick(.subscribe)
            return registry.subscribe(primary, of: E.self, traits: traits, bus: bus)
        }
        return registered.map { EventToken($0, in: self) } ?? .inert
    }

    /// The nodes of a new subscription with `body`: the primary, with the other keys' nodes as its
    /// siblings. Built before the lock is taken, and registered under it by `Registry.link`: an
    /// allocation under the lock would make every thread waiting for the lock wait for the
    /// allocator too. The plain shape gets its own class (see `PlainSubscription`).
    func makeNodes<E: Sendable>(
        keys: SubscriptionKeys, body: Body<E>, traits: SubscriptionTraits, owner: AnyObject?, callSite: CallSite
    ) -> SubscriptionNode {
        if case .immediate(.event(let handler)) = body, !traits.isOwned {
            return makePlainNodes(E.self, keys: keys, handler: handler, traits: traits, callSite: callSite)
        }
        return Self.nodes(for: keys) { key in
            Subscription(key: key, body: body, traits: traits, owner: owner, callSite: callSite, container: self)
        }
    }

    /// The nodes of a new subscription of the plain shape (see `PlainSubscription`), as
    /// ``makeNodes(keys:body:traits:owner:callSite:)``.
    @usableFromInline
    func makePlainNodes<E: Sendable>(
        _: E.Type, keys: SubscriptionKeys, handler: @escaping @Sendable (E) -> Void, traits: SubscriptionTraits,
        callSite: CallSite
    ) -> SubscriptionNode {
        let plainClass = PlainSubscriptionClasses.shared.plainClass(of: E.self)
        return Self.nodes(for: keys) { key in
            plainClass.init(handler: handler, key: key, traits: traits, callSite: callSite, container: self)
        }
    }

    /// The node `make` builds for the first key (or for none), with the other keys' as its siblings.
    /// A key given twice counts once (deduplicated here, so that chaining `ofType` stays O(1)).
    @inline(__always)
    private static func nodes(for keys: SubscriptionKeys, _ make: (String?) -> SubscriptionNode) -> SubscriptionNode {
        guard !keys.others.isEmpty else { return make(keys.first) }
        let unique = keys.unique
        let primary = make(unique[0])
        primary.siblings = unique.dropFirst().map(make)
        return primary
    }

    /// `subscribe` with the replay of the kept sticky events (see there).
    ///
    /// Nothing is enqueued under the lock (DESIGN §15): enqueueing captures the context (user code)
    /// and takes the mailbox's lock. A subscription whose replay is enqueued registers *gated*
    /// (``MailboxLane``): the live deliveries that reach it before its replay is enqueued wait
    /// behind it.
    @inline(never)
    private func subscribeReplaying<E: Sendable>(
        _ primary: SubscriptionNode, of _: E.Type, traits: SubscriptionTraits, deliversNow: Bool, bus: EventBus
    ) -> EventToken {
        let subscribed = withRegistry { registry in
            registry.tick(.subscribe)
            return registry.subscribeReplaying(primary, of: E.self, traits: traits, bus: bus)
        }
        guard let (node, replay) = subscribed else { return .inert }
        if !deliversNow, let typed = node as? Subscription<E> {
            enqueueReplay(replay, to: typed)
        } else {
            deliverReplay(replay, to: node)
            // A main-actor subscription made on the main thread replays there, but was gated for
            // its off-main deliveries: they may run now.
            (node as? Subscription<E>)?.liftReplayGate()
        }
        return EventToken(node.handle, in: self)
    }

    /// Enqueues `replay` to `node`'s lane, ahead of its live deliveries; each `.untilDelivered`
    /// event is held until its delivery is over (received if its handler ran).
    private func enqueueReplay<E: Sendable>(_ replay: [StickyStore<E>.Entry], to node: Subscription<E>) {
        let holds = replay.map { entry in
            entry.takeOnce
                ? StickyHold(
                    typeID: ObjectIdentifier(E.self), key: entry.key, sequence: entry.sequence, container: self)
                : nil
        }
        let outcomes = node.enqueueReplay(replay.map(\.event), holds: holds) ?? []
        for (hold, outcome) in zip(holds, outcomes) {
            guard let hold else { continue }
            endHolding(hold, received: outcome.ranHandler, enqueued: outcome == .enqueued ? 1 : 0)
        }
    }

    /// Delivers `replay` to `node` on this thread, in order, stopping at the first that does not
    /// reach it; settles the `.untilDelivered` events it held.
    private func deliverReplay<E: Sendable>(_ replay: [StickyStore<E>.Entry], to node: SubscriptionNode) {
        var delivered = 0
        for entry in replay {
            let outcome = node.deliver(event: entry.event)
            // Ended or owner gone: the rest would not be delivered either.
            guard outcome.isReached else {
                if outcome == .ownerGone { reclaim(CollectionOfOne(node.handle)) }
                break
            }
            delivered += 1
        }
        if replay.contains(where: \.takeOnce) {
            // The first `delivered` entries reached the subscriber; the rest did not.
            let held = replay.enumerated().lazy.filter(\.element.takeOnce).map {
                (key: $0.element.key, sequence: $0.element.sequence, received: $0.offset < delivered)
            }
            settleHeld(ObjectIdentifier(E.self), held)
        }
    }

    /// After a synchronous replay that held `.untilDelivered` events of the type `typeID` (see
    /// `StickyStore`), in one critical section: keeps each for a taker if no handler ran for it
    /// (`received` false), lets go of it otherwise.
    private func settleHeld(
        _ typeID: ObjectIdentifier, _ held: some Sequence<(key: String?, sequence: UInt64, received: Bool)>
    ) {
        withRegistry { registry in
            for entry in held {
                registry.settleHeld(typeID, key: entry.key, sequence: entry.sequence, received: entry.received)
            }
        }
    }

    /// The hold of an `.untilDelivered` event a dispatch holds (see ``StickyHold``), retained: the
    /// dispatch releases it in ``endHolding(_:received:enqueued:)``, after its last walk. Not
    /// inlined: it is off the plain dispatch path.
    @inline(never)
    // Unmanaged: see `DispatchPlan.hold`.
    private func makeHold(_ typeID: ObjectIdentifier, key: String?, sequence: UInt64) -> Unmanaged<StickyHold> {
        Unmanaged.passRetained(StickyHold(typeID: typeID, key: key, sequence: sequence, container: self))
    }

    /// After a dispatch that held an `.untilDelivered` event: ends `hold` (see
    /// `Registry.endHolding`). Not inlined: it is off the plain dispatch path.
    @inline(never)
    private func endHolding(_ hold: StickyHold, received: Bool, enqueued: Int) {
        withRegistry { registry in registry.endHolding(hold, received: received, enqueued: enqueued) }
    }

    /// After a delivery enqueued holding an `.untilDelivered` event ran (`received`: its handler
    /// ran) or found its subscription ended or its owner gone: see `Registry.finishHolding`.
    func finishHolding(_ hold: StickyHold, received: Bool) {
        withRegistry { registry in registry.finishHolding(hold, received: received) }
    }

    /// Ends the subscription and forgets it, in O(1) per key, releasing what it held after
    /// unlocking. Does nothing if it has already ended.
    func remove(_ subscription: SubscriptionHandle, reason: TraceRecord.Ended.Reason) {
        withRegistry { registry in
            registry.tick(.dispose)
            registry.end(subscription, reason: reason)
        }
    }

    /// Ends and forgets `subscriptions`, whose owner was found gone. The sequence is iterated
    /// under the bus's lock: it must not run user code (no owner loads in a lazy filter).
    func reclaim(_ subscriptions: some Sequence<SubscriptionHandle>) {
        withRegistry(reserving: subscriptions.underestimatedCount) { registry in
            for subscription in subscriptions { registry.end(subscription, reason: .ownerGone) }
        }
    }

    /// Whether the subscription is live.
    func isLive(_ subscription: SubscriptionHandle) -> Bool {
        withRegistry { registry in registry.isLive(subscription) }
    }

    /// Records that the subscription's token is held by `bag`; tells the bag at once if the
    /// subscription has already ended.
    func attach(_ subscription: SubscriptionHandle, to bag: BagTokens) {
        let attached = withRegistry { registry in registry.attach(subscription, to: bag) }
        if !attached { bag.forget(subscription.id) }
    }

    /// Hands an error thrown by `node`'s handler to the error handler (no lock held by the caller).
    func report(_ error: HandlerError, from node: SubscriptionNode) {
        let (handler, firstForNode, traces, evicted) = withRegistry { registry in
            defer { node.printedError = true }
            let evicted = registry.noteHandlerError(error)
            return (registry.handlerErrorHandler, !node.printedError, registry.hasTracer, evicted)
        }
        ReleaseLoop.drop(consume evicted)
        if let handler {
            handler(error)
        } else if firstForNode {
            HandlerError.printInDebugBuilds(error)
        }
        if traces { trace(.handlerError(error)) }
    }

    /// What introspection shows of the subscription, if it is live.
    func info(_ subscription: SubscriptionHandle) -> SubscriptionInfo? {
        withRegistry { registry in registry.primary(of: subscription) }?.info()
    }

    /// A delivery was enqueued in a mailbox (`EventBusTesting`'s `settle()`); returns its ticket,
    /// which the drain finishes (``InFlightDeliveries/finished(_:count:)``).
    func deliveryEnqueued() -> InFlightTicket {
        inFlight.enqueued()
    }

    /// A subscription's bound dropped a delivery: counted, and traced. No lock held.
    func noteDropped(from node: SubscriptionNode, type: Any.Type, buffering: EventBuffering) {
        let total = droppedDeliveries.add(1)
        trace(.dropped(TraceRecord.Dropped(type: type, subscriptionID: node.id, buffering: buffering, total: total)))
    }

    /// An enqueued delivery ended without running.
    func noteEndedUnrun() {
        endedUnrunDeliveries.add(1)
    }

    /// The last handler errors (at most 64) and how many there were in all.
    var handlerErrors: (recent: [HandlerError], count: Int) {
        withRegistry { registry in (registry.recentHandlerErrors, registry.handlerErrorCount) }
    }

    /// The live subscriptions (of `typeID` only, if given), in subscription order. O(N): the lock
    /// is taken for 256 slots at a time; the infos are built with no lock held.
    func subscriptionInfos(ofTypeID typeID: ObjectIdentifier?) -> [SubscriptionInfo] {
        var found: [SubscriptionNode] = []
        var next: UInt32? = 0
        while let start = next {
            next = withRegistry { registry in
                registry.primaries(from: start, limit: 256, ofTypeID: typeID, into: &found)
            }
        }
        return found.map { $0.info() }.sorted { $0.id < $1.id }
    }

    /// The bus's tracer. Like the handlers below, the one it replaces is swapped out under the lock
    /// and released after unlocking (the deinits of what it captured may call the bus).
    var tracer: (@Sendable (TraceRecord) -> Void)? {
        get { withRegistry { registry in registry.tracer } }
        set { replace(\.tracer, with: newValue) }
    }

    /// Sets the registry's closure at `keyPath` to `value`; the one it replaces is released after
    /// unlocking, through ``ReleaseLoop`` (the deinits of what it captured may call the bus).
    private func replace<Closure>(_ keyPath: WritableKeyPath<Registry, Closure?>, with value: Closure?) {
        var replaced = value
        withRegistry { registry in swap(&registry[keyPath: keyPath], &replaced) }
        ReleaseLoop.drop(replaced.take())
    }

    /// Hands `record` to the tracer, if there is one (read under the lock, called outside it).
    @inline(never)
    func trace(_ record: @autoclosure () -> TraceRecord) {
        guard let tracer else { return }
        tracer(record())
    }

    /// The bus's dead-event handler.
    var deadEventHandler: (@Sendable (DeadEvent) -> Void)? {
        get { withRegistry { registry in registry.deadEventHandler } }
        set { replace(\.deadEventHandler, with: newValue) }
    }

    /// The bus's handler-error handler.
    var handlerErrorHandler: (@Sendable (HandlerError) -> Void)? {
        get { withRegistry { registry in registry.handlerErrorHandler } }
        set { replace(\.handlerErrorHandler, with: newValue) }
    }

    /// What one dispatch did.
    struct Tally {
        /// Deliveries started or enqueued.
        var reached = 0
        /// Of which enqueued.
        var enqueued = 0
        var isStopped = false
        /// Handed to the type's hooks (which deliver through a dispatch of their own).
        var isHooked = false
        /// Whether the walk ended before monitors it left for a ``Walk/monitors(upTo:)`` walk.
        var leftMonitors = false

        var isDead: Bool { reached == 0 && !isStopped && !isHooked }
    }

    /// Which of a type's subscribers a dispatch walks. An event with supertypes is delivered to
    /// its own handlers, then to its supertypes' handlers, then to its own monitors, then to its
    /// supertypes' monitors: the walks after the first are `handlers` and `monitors` walks.
    /// The walks after the first deliver holding what the first holds (`hold`: see ``StickyHold``).
    enum Walk {
        /// Handlers, then monitors (the exact type's handlers only, if it has supertypes).
        case all
        /// Handlers only, of subscriptions up to `upTo` (the id the dispatch's first walk started
        /// with); `stopped`: a handler already stopped the dispatch (so none runs).
        // Unmanaged: as `DispatchPlan.hold`.
        case handlers(stopped: Bool, upTo: UInt64, holding: Unmanaged<StickyHold>? = nil)
        /// Monitors only, of subscriptions up to `upTo`.
        // Unmanaged: as `DispatchPlan.hold`.
        case monitors(upTo: UInt64, holding: Unmanaged<StickyHold>? = nil)
    }

    // MARK: Delivery: the named entry points, and the one path they share

    /// What a walk through ``walk(_:key:_:)`` does beyond a bus's plain dispatch: each entry point
    /// below makes one. A plain dispatch is `DispatchRequest(bus: bus)`.
    struct DispatchRequest {
        /// The bus of a full dispatch, whose hooks, supertypes, sticky events and dead-event report
        /// apply; `nil` for a walk over one type's subscribers only (a supertype's, a chain node's).
        let bus: EventBus?
        /// How to keep the event, for a sticky dispatch.
        var sticky: StickyDispatch?
        /// Whether the type's hooks are passed over (they deliver through here).
        var bypassingHooks = false
        /// Whether the unkeyed subscribers are walked, as well as those of the key.
        var includingUnkeyed = true
        /// Which of the subscribers are walked.
        var walk: Walk = .all
    }

    /// ``EventBus/dispatch(_:)``'s entry point, called from the caller's module with the event's
    /// address (taken there, where the event's type is known, at no cost).
    @usableFromInline
    func dispatch<E: Sendable>(addressOf event: UnsafePointer<E>, key: String?, on bus: EventBus) {
        walk(event, key: key, DispatchRequest(bus: bus))
    }

    /// ``EventBus/dispatch(_:sticky:)``'s entry point: a dispatch that keeps `event` as `sticky`
    /// says, in the critical section that finds its subscribers.
    func dispatch<E: Sendable>(_ event: E, key: String?, on bus: EventBus, sticky: StickyDispatch) {
        withUnsafePointer(to: event) { _ = walk($0, key: key, DispatchRequest(bus: bus, sticky: sticky)) }
    }

    /// How a type's hooks hand an event to the bus's subscribers of `key` and the unkeyed ones:
    /// a dispatch that passes the hooks over.
    func deliverPastHooks<E: Sendable>(_ event: E, key: String?, on bus: EventBus) {
        withUnsafePointer(to: event) { _ = walk($0, key: key, DispatchRequest(bus: bus, bypassingHooks: true)) }
    }

    /// ``deliverPastHooks(_:key:on:)`` to the subscribers of `key` only (the notification bridge's
    /// sender-filtered deliveries, which unkeyed subscribers must not see twice).
    func deliverPastHooksToKeyed<E: Sendable>(_ event: E, key: String?, on bus: EventBus) {
        let request = DispatchRequest(bus: bus, bypassingHooks: true, includingUnkeyed: false)
        withUnsafePointer(to: event) { _ = walk($0, key: key, request) }
    }

    /// Delivers `value`, which an event is delivered as, to its type's handlers or monitors (as
    /// `part` says, with the first walk's bound and hold): no hooks, supertypes, sticky or dead
    /// event of its own.
    @discardableResult
    func deliverAsSupertype<S: Sendable>(_ value: S, key: String?, _ part: Walk) -> Tally {
        withUnsafePointer(to: value) { walk($0, key: key, DispatchRequest(bus: nil, walk: part)) }
    }

    /// A chain hop: delivers the event at `event` to this node's subscribers of `key` and the
    /// unkeyed ones, as `part` says (all of them, or the monitors after a stop), past any hooks.
    @discardableResult
    func post<E: Sendable>(at event: UnsafePointer<E>, key: String?, _ part: Walk = .all) -> Tally {
        walk(event, key: key, DispatchRequest(bus: nil, bypassingHooks: true, walk: part))
    }

    /// The one delivery path. Dispatches the event at `event` (which stays there, unchanged, until
    /// this returns) with key `key` to `E`'s hooks if it has any (unless `request` bypasses them),
    /// else walks its subscribers of `key` (and the unkeyed ones, unless the request leaves them
    /// out) with a ``DispatchPlan``, decided under the lock a chunk at a time and delivered outside
    /// it, then its supertypes' subscribers; keeps it if the request is sticky; reports it to the
    /// dead-event handler if it reached nobody.
    ///
    /// A request with a bus is a full dispatch; without one, a delivery to one type's subscribers
    /// only (a supertype's, the exact type's monitors, a chain node's: no hooks, supertypes, sticky
    /// or dead event), as its `walk` says.
    ///
    /// Inlined into its entry points in release builds (its closures are then inlined too, which
    /// saves a sixth of a one-subscriber dispatch, and a constant request costs nothing); not in
    /// debug builds, where there is no speed to gain and the stack per nested dispatch
    /// ("Guarantees") is measured without it.
    @discardableResult
    #if DEBUG
        @inline(never)
    #else
        @inline(__always)
    #endif
    private func walk<E: Sendable>(_ event: UnsafePointer<E>, key: String?, _ request: DispatchRequest) -> Tally {
        let sticky = request.sticky
        let typeID = ObjectIdentifier(E.self)
        var ticks = 1
        if sticky == nil, request.bus != nil, !request.bypassingHooks, case .all = request.walk, findsNothing(typeID) {
            // Nobody to deliver to, nothing to report: only the bookkeeping's share is left, paid
            // for all of them by every `idleTickInterval`th such dispatch.
            guard idleDispatches.add(1) % Self.idleTickInterval == 0 else { return Tally() }
            ticks = Self.idleTickInterval
        }
        let (tally, reports) = withUnsafeTemporaryAllocation(
            of: Unmanaged<SubscriptionNode>.self, capacity: DispatchPlan.firstChunkCapacity
        ) {
            chunk in
            var plan = DispatchPlan(includingUnkeyed: request.includingUnkeyed, chunk: chunk)
            let start = withRegistry { registry in
                registry.beginDispatch(event, key: key, request, ticks: ticks, plan: &plan)
            }
            let (reports, held) = (start.reports, start.held)
            if held != 0 { plan.hold = makeHold(typeID, key: key, sequence: held) }
            var tally = Tally()
            switch start.route {
            case .plan:
                plan.run(event, key: key, in: self)
                tally = Tally(
                    reached: plan.reached, enqueued: plan.enqueued, isStopped: plan.isStopped,
                    leftMonitors: plan.leftMonitors)
            case .planThenSupertypes(let bucket):
                plan.run(event, key: key, in: self)
                tally = deliver(event, as: bucket.bucket, key: key, after: &plan)
            case .hooks(let bucket):
                tally.isHooked = true
                handOver(event, to: bucket.bucket, refusingSticky: sticky != nil)
            case .nothing:
                break
            }
            if held != 0, let hold = plan.hold {
                // Received if a handler ran; the deliveries it enqueued say later whether theirs did.
                endHolding(hold.takeRetainedValue(), received: tally.reached > tally.enqueued, enqueued: tally.enqueued)
            }
            return (tally, reports)
        }
        // Once the chunk and the plan are gone: the report's arguments take their place in the frame.
        if reports != 0 { report(reports, event, key: key, DispatchReport(tally: tally, sticky: sticky)) }
        return tally
    }

    /// What ``report(_:_:key:_:)`` reports of a dispatch. More than 4 words, so passed by address:
    /// as arguments of their own, they took the stack slots of the arguments past the registers
    /// in the dispatch's frame, on the stack while handlers run.
    private struct DispatchReport {
        let tally: Tally
        let sticky: StickyDispatch?
    }

    /// Delivers `event` to its supertypes' handlers, then to the monitors: its own type's (whose
    /// handlers `plan` delivered to, walking the subscriptions up to its `maxID`), then its
    /// supertypes'; every walk holds what `plan` holds. (`plan` is only read: `inout` passes the
    /// walk's own by address, where a borrow made a copy of it in the dispatch's frame, on the stack
    /// while handlers run.)
    @inline(never)
    private func deliver<E: Sendable>(
        _ event: UnsafePointer<E>, as bucket: Bucket, key: String?, after plan: inout DispatchPlan
    ) -> Tally {
        var delivery = SupertypeDelivery(
            core: self, key: key, upTo: plan.maxID, holding: plan.hold,
            after: Tally(reached: plan.reached, enqueued: plan.enqueued, isStopped: plan.isStopped))
        // A `.planThenSupertypes` route is only made for a bucket with supertypes.
        bucket.supertypes.unsafelyUnwrapped.deliver(event, &delivery)
        if plan.leftMonitors {
            let monitors = walk(
                event, key: key,
                DispatchRequest(
                    bus: nil, includingUnkeyed: plan.includingUnkeyed,
                    walk: .monitors(upTo: plan.maxID, holding: plan.hold)))
            delivery.countMonitorDeliveries(monitors)
        }
        delivery.deliverToMonitors()
        return Tally(reached: delivery.reached, enqueued: delivery.enqueued, isStopped: delivery.isStopped)
    }

    /// Hands a dead event to the dead-event handler, if there is one. (Only events are dispatched
    /// with a bus, so the cast never fails.)
    @inline(never)
    private func reportDead(_ event: some Sendable, key: String?) {
        guard let handler = deadEventHandler, let event = event as? any Event else { return }
        handler(DeadEvent(event: event, key: key))
        trace(.deadEvent(DeadEvent(event: event, key: key)))
    }

    /// After a dispatch: hands it to the tracer (`reports` bit 2) and, if it reached nobody, to the
    /// dead-event handler (bit 1).
    @inline(never)
    private func report<E: Sendable>(
        _ reports: UInt8, _ event: UnsafePointer<E>, key: String?, _ dispatched: DispatchReport
    ) {
        if reports & 2 != 0 { traceDispatch(E.self, key: key, dispatched.tally, sticky: dispatched.sticky) }
        if reports & 1 != 0 && dispatched.tally.isDead { reportDead(event.pointee, key: key) }
    }

    /// Hands the event at `event` to the hooks of `bucket`'s type (which deliver it through a
    /// dispatch of their own), having them report first that it cannot be kept if it was sticky.
    @inline(never)
    private func handOver<E: Sendable>(_ event: UnsafePointer<E>, to bucket: Bucket, refusingSticky: Bool) {
        // A `.hooks` route is only made for a bucket with hooks.
        let hooks = bucket.hooks.unsafelyUnwrapped
        if refusingSticky { hooks.refuseSticky() }
        hooks.dispatch(event.pointee)
    }

    /// Hands a dispatch's record to the tracer.
    private func traceDispatch<E>(_: E.Type, key: String?, _ tally: Tally, sticky: StickyDispatch?) {
        trace(
            .dispatched(
                TraceRecord.Dispatched(
                    type: E.self, key: key, delivered: tally.reached - tally.enqueued,
                    enqueued: tally.enqueued, isStopped: tally.isStopped, sticky: sticky?.policy)))
    }

    /// The hooks of `E` on this bus, making its bucket if needed; `E` must be a ``HookedEvent``.
    func hooks<E: Event>(of _: E.Type, on bus: EventBus) -> any EventTypeHooks {
        let hooks = withRegistry { registry in registry.bucket(for: E.self, on: bus).hooks }
        guard let hooks else { preconditionFailure("EventBus: \(E.self) is not a hooked event type") }
        return hooks
    }

    /// Reclaims every subscription whose owner is gone, a bounded batch per lock acquisition.
    /// Owners of main-bound subscriptions are only checked on the main queue: off it, a pass there
    /// is scheduled.
    func purge() {
        let onMain = isOnMainQueue
        var remaining = withRegistry { registry in registry.ownedCount }
        while remaining > 0 {
            let batch = Swift.min(remaining, 256)
            remaining -= batch
            // The owners are checked after unlocking, as the sweep's are (see `AfterUnlock`).
            withRegistry(reserving: batch) { registry in registry.pickForPurge(limit: batch, onMain: onMain) }
            Locked<Registry>.yieldToWaiters()
        }
        if !onMain { scheduleMainSweep(force: true) }
    }

    /// Schedules a purge on the main queue (unless one is scheduled), where main-bound owners may
    /// be checked. `force`: even if the sweep has not skipped a full turn's worth of them yet.
    func scheduleMainSweep(force: Bool = false) {
        let due = force ? withRegistry { registry in registry.mainSweepDue(force: true) } : true
        guard due else { return }
        // Strongly: a weak reference would give the registry a side table, and every retain of it
        // (each subscription holds it) would take the runtime's slow path.
        DispatchQueue.main.async {
            self.withRegistry { registry in registry.mainSweepScheduled = false }
            self.purge()
        }
    }

    /// The number of live subscriptions, internal ones excluded. O(1).
    var count: Int { withRegistry { registry in registry.subscriptionCount - registry.internalCount } }

    /// The number of sticky events on the bus, after letting go of the expired ones.
    var stickyCount: Int { afterExpiringDueSticky { registry in registry.stickyCount } }

    /// The number of sticky events of `E`, after letting go of the expired ones.
    func stickyCount<E: Sendable>(of _: E.Type) -> Int {
        afterExpiringDueSticky { registry in registry.stickyStore(of: E.self)?.count ?? 0 }
    }

    /// Sticky events a count lets go of at most per critical section (see
    /// ``afterExpiringDueSticky(_:)``).
    static let stickyExpiryBatch = 64

    /// Lets go of every expired sticky event still queued, `stickyExpiryBatch` at most per
    /// critical section (the lock is let go of between batches, as `purge` does), and runs `body`
    /// in the one that found none due. O(1) amortised: each step follows the dispatch that queued
    /// or postponed the item.
    private func afterExpiringDueSticky<R>(_ body: (inout Registry) -> R) -> R {
        while true {
            let result: R? = withRegistry { registry in
                registry.expireSticky(limit: Self.stickyExpiryBatch) ? body(&registry) : nil
            }
            if let result { return result }
            Locked<Registry>.yieldToWaiters()
        }
    }

    /// Removes every sticky event of the bus.
    func removeAllSticky() {
        withRegistry { registry in registry.removeAllSticky() }
    }

    /// The number of live subscriptions to the type `typeID`. O(1).
    func count(ofTypeID typeID: ObjectIdentifier) -> Int {
        withRegistry { registry in registry.bucket(for: typeID)?.subscriptionCount ?? 0 }
    }

    /// `count(ofTypeID:)`, internal subscriptions excluded. O(1).
    func userCount(ofTypeID typeID: ObjectIdentifier) -> Int {
        withRegistry { registry in registry.bucket(for: typeID).map { $0.subscriptionCount - $0.internalCount } ?? 0
        }
    }

    /// See `Registry.dispatchesPerSweepTurn`; plus the dispatches that skipped the lock whose share
    /// a later one pays (at most `idleTickInterval - 1`).
    var dispatchesPerSweepTurn: Int {
        withRegistry { registry in registry.dispatchesPerSweepTurn } + Self.idleTickInterval - 1
    }

    /// The summary ``mayHaveBucket(_:)`` reads (tests).
    var typeSummaryBits: Int { typeSummary.current }

    /// The number of event types with a bucket (tests of bucket removal).
    var bucketCount: Int { withRegistry { registry in registry.bucketCount } }

    /// The number of items in the sticky events' expiry queue (tests of its bound).
    var stickyExpiryCount: Int { withRegistry { registry in registry.expiryCount } }

    /// The slots of the table of keys of `typeID`'s bucket, 0 if it has none (tests of shrinking).
    func keyedCapacity(ofTypeID typeID: ObjectIdentifier) -> Int {
        withRegistry { registry in registry.bucket(for: typeID)?.keyedCapacity ?? 0 }
    }

    /// The slot table's allocated pages (tests of their release).
    var slotPageCount: Int { withRegistry { registry in registry.slotPageCount } }

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
