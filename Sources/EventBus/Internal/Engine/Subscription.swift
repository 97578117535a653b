import Dispatch

/// A subscription to events of type `E`: the node plus its typed body.
///
/// Built by a maker, which knows the handler's shape and the owner's type, so the body needs no
/// cast and no invalid combination exists. ``deliver(_:)`` is the one place a handler is called from.
///
/// The commonest body, `.immediate(.event)` with no owner, gets a node class of its own instead:
/// ``PlainSubscription``, which holds neither a body nor an owner (`BusCore.makeNodes`
/// picks the class).
final class Subscription<E: Sendable>: SubscriptionNode, @unchecked Sendable {
    // @unchecked Sendable: as SubscriptionNode; `body` is immutable, `heldOwner` a weak reference
    // written once in init.
    let body: Body<E>
    /// The `freeWith` owner, held weakly.
    private weak var heldOwner: AnyObject?

    init(
        key: String?, body: Body<E>, traits: SubscriptionTraits, owner: AnyObject?, callSite: CallSite,
        container: BusCore
    ) {
        self.body = body
        heldOwner = owner
        super.init(
            key: key, traits: traits, ownerBelongsToMain: body.runsOnMain, callSite: callSite, container: container)
    }

    override var owner: AnyObject? { heldOwner }

    override func deliver(_ event: UnsafeRawPointer) -> Outcome {
        // A dispatch of `E` reaches only the nodes in the bucket of `E` (`Registry.link`).
        Self.withEvent(at: event, as: E.self) { event in deliver(event) }
    }

    override func deliver(_ event: UnsafeRawPointer, holding hold: StickyHold) -> Outcome {
        Self.withEvent(at: event, as: E.self) { event in deliver(event, holding: hold) }
    }

    override var subscribedType: Any.Type { E.self }

    override var delivery: SubscriptionInfo.Delivery {
        switch body {
        case .immediate: .synchronous
        case .mainActor: .mainActor
        case .stream: .stream
        case .enqueued(let lane):
            switch lane.mailbox.target {
            case .queue(let queue): .queue(label: queue.label)
            case .actor(let hop): .actor(typeName: String(reflecting: hop.actorType))
            case .stream: .stream
            }
        }
    }

    override var lane: MailboxLaneBase? { body.lane }

    /// Delivers `event` as the body says: now, or enqueued in its lane.
    ///
    /// Only the immediate call is made here: the other bodies are delivered in functions of their
    /// own, so that this frame, on the stack while a handler runs (and dispatches again), stays
    /// small ("Guarantees": the stack per nested dispatch).
    func deliver(_ event: E) -> Outcome {
        deliver(event, holding: nil)
    }

    /// ``deliver(_:)``; a delivery it enqueues finishes `hold`, if there is one, when it is over
    /// (see ``StickyHold``).
    @inline(__always)
    private func deliver(_ event: E, holding hold: StickyHold?) -> Outcome {
        switch body {
        case .immediate(let callback):
            return call(callback, event)
        case .enqueued(let lane):
            return lane.enqueue(event, holding: hold, for: self)
        case .mainActor(let handler, let lane):
            return deliverOnMainActor(handler, lane, event, holding: hold)
        case .stream(let feed):
            return enqueue(event, into: feed, holding: hold)
        }
    }

    /// Puts `event` into a stream's lane, if the subscription's owner, if any, is alive: a stream
    /// has no drain that could check it later (as a synchronous handler, it is checked here).
    @inline(never)
    private func enqueue(_ event: E, into feed: EventStreamFeed<E>, holding hold: StickyHold?) -> Outcome {
        let owner = isOwned ? heldOwner : nil
        if isOwned && owner == nil { return .ownerGone }
        defer { withExtendedLifetime(owner) {} }
        return feed.lane.enqueue(event, holding: hold, for: self)
    }

    /// Calls a main-actor handler now on the main queue, or enqueues the call in `lane` (which
    /// drains on the main queue).
    @inline(never)
    private func deliverOnMainActor(
        _ handler: @escaping MainActorHandler<E>, _ lane: MailboxLane<E>, _ event: E, holding hold: StickyHold?
    ) -> Outcome {
        if isOnMainQueue { return callOnMainQueue(handler, event) }
        return lane.enqueue(event, holding: hold, for: self)
    }

    /// Enqueues a replay of `events` (kept sticky events, oldest first; `holds[i]` the hold of
    /// `events[i]`) ahead of the live deliveries that reached this subscription since it was
    /// registered (see ``MailboxLane``); `nil` if its body does not enqueue here.
    func enqueueReplay(_ events: [E], holds: [StickyHold?]) -> [Outcome]? {
        guard !body.deliversNow, let lane = body.lane else { return nil }
        return lane.enqueueReplay(events, holds: holds, to: self)
    }

    /// Lets the live deliveries that waited for a replay made on this thread run (see
    /// ``MailboxLane``).
    func liftReplayGate() {
        _ = body.lane?.enqueueReplay([], holds: [], to: self)
    }

    /// Calls a nonisolated callback on this thread if the subscription is live and its owner, if
    /// any, alive (retained for the call).
    @inline(__always)
    func call(_ callback: Callback<E>, _ event: E) -> Outcome {
        guard isLive else { return .ended }
        switch callback {
        case .event(let handler) where !isOwned:
            handler(event)
            return .delivered
        case .event(let handler):
            guard let owner = heldOwner else { return .ownerGone }
            // Held to the end of the call (`withExtendedLifetime` with a body would build a closure
            // context in this frame, which is on the stack while the handler runs).
            defer { withExtendedLifetime(owner) {} }
            handler(event)
            return .delivered
        case .general(let handler):
            return callWithOwner(handler, event)
        }
    }

    /// Calls `handler` with the owner, retained for the call (`nil` for a subscription without
    /// one; `.ownerGone` if it is gone). A thrown error goes to the error handler and counts as
    /// delivered; `.stop` stops the dispatch.
    @inline(__always)
    private func callWithOwner(
        _ handler: (AnyObject?, E) throws -> EventPropagation, _ event: E
    ) -> Outcome {
        let owner = isOwned ? heldOwner : nil
        if isOwned && owner == nil { return .ownerGone }
        defer { withExtendedLifetime(owner) {} }  // as in `call`
        do {
            return try handler(owner, event) == .stop ? .stopped : .delivered
        } catch {
            report(error, type: E.self)
            return .delivered
        }
    }

    func callOnMainQueue(_ handler: @escaping MainActorHandler<E>, _ event: E) -> Outcome {
        // Checked in release builds too: the bit cast below is sound only on the main queue.
        precondition(isOnMainQueue, "EventBus: a main-actor handler called off the main queue")
        guard isLive else { return .ended }
        // On the main queue main-actor code may run, so the handler is called through its
        // nonisolated view. (`MainActor.assumeIsolated` would re-check the executor through the
        // runtime and allocate, on every delivery.) unsafeBitCast: isolation is a compile-time
        // attribute of a synchronous function type (same representation and calling convention).
        let nonisolated = unsafeBitCast(handler, to: (@Sendable (AnyObject?, E) throws -> EventPropagation).self)
        return callWithOwner(nonisolated, event)
    }

    /// What a context propagator is told of an enqueued delivery of `event` (see
    /// `BusCore.withContext`): made only when one restores a context.
    func contextDelivery(_ event: E) -> EventContextDelivery {
        let hop: EventContextDelivery.Hop =
            switch delivery {
            case .queue(let label): .queue(label: label)
            case .actor(let typeName): .actor(typeName: typeName)
            case .stream: .stream
            case .mainActor, .synchronous: .mainActor  // a synchronous body never enqueues
            }
        return EventContextDelivery(event, hop: hop, subscriptionID: id)
    }
}
