public import Dispatch

/// The chained builder for a subscription, returned by ``EventBus/on(_:)``.
///
/// Each step returns a new maker (it is a value type), so a partly configured maker can be kept
/// and reused. Nothing is registered until `next`. The maker's type records what the chain chose,
/// so the compiler offers only the handlers that fit:
///
/// - `Owner` is `Never` until ``freeWith(_:)`` binds an owner; then `next { owner, event in }`
///   is offered too.
/// - `Delivery` is ``EventDelivery/Synchronous`` (on the dispatching thread),
///   ``EventDelivery/Queued`` (after ``atQueue(_:)``), ``EventDelivery/MainActor`` (after
///   ``onMainActor()``, whose handlers are `@MainActor`), ``EventDelivery/Isolated`` (after
///   ``isolated(to:)``, whose handlers are isolated to the owning actor) or
///   ``EventDelivery/MainActorChain`` (a ``MainActorEventNode``'s, whose `@MainActor` handlers may
///   also `handle`).
///
/// The finishers are written once per owner kind against what the style declares: its handlers'
/// isolation (``NonisolatedDelivery``, ``MainActorDelivery``, or the owning actor's), and whether
/// they can stop the dispatch (``StoppingDelivery``, which offers `handle`). Each takes a throwing
/// handler (a non-throwing closure converts at no cost); where a finisher does not fit, the
/// compiler's message says why.
///
/// ```swift
/// final class ChatScreen: EventSubscribing, Sendable {
///     let renderQueue = DispatchQueue(label: "render")
///     func start(on bus: EventBus) {
///         bus.on(ChatMessage.self)        // events of this type...
///             .atQueue(renderQueue)       // ...delivered on this queue...
///             .ofType("room-7")           // ...only with this key...
///             .freeWith(self)             // ...until self is deallocated...
///             .next { owner, message in   // ...to this handler.
///                 owner.render(message)
///             }
///     }
///     func render(_ message: ChatMessage) { print(message.text) }
/// }
/// ```
public struct SubscriberMaker<E: Sendable, Owner, Delivery: EventDeliveryStyle> {
    // @usableFromInline: read by the inlinable plain `next` (see `register(_:at:)`).
    @usableFromInline let bus: EventBus
    @usableFromInline var options = SubscriptionOptions()
    /// The `freeWith` owner, held weakly.
    @usableFromInline weak var owner: AnyObject?

    @inlinable
    init(bus: EventBus) {
        self.bus = bus
    }

    /// This maker with another owner or delivery type (the options carry over).
    private func retyped<NewOwner, NewDelivery>(
        _: NewOwner.Type = NewOwner.self, _: NewDelivery.Type = NewDelivery.self
    ) -> SubscriberMaker<E, NewOwner, NewDelivery> {
        var maker = SubscriberMaker<E, NewOwner, NewDelivery>(bus: bus)
        maker.options = options
        maker.owner = owner
        return maker
    }

    /// Receives only events whose ``Event/eventType`` is `key`.
    ///
    /// Chain it to subscribe to several keys with one token; a key given twice counts once. Without
    /// `ofType`, the subscriber receives every event of the type, whatever its key. Keyed
    /// subscribers are called before unkeyed ones.
    ///
    /// ```swift
    /// let token = bus.on(ChatMessage.self).ofType("room-7").ofType("room-9").next { print($0.text) }
    /// token.dispose()   // ends both
    /// ```
    @inlinable
    public consuming func ofType(_ key: String) -> Self {
        options.keys.append(key)
        return self
    }

    /// Calls this subscriber before (``EventPriority/high``) or after (``EventPriority/low``) the
    /// ``EventPriority/normal`` ones, which is the default. A later `priority` replaces it.
    ///
    /// A dispatch calls its subscribers by priority, then those of the event's key before the
    /// unkeyed ones, then in subscription order; ``monitor()`` subscribers come after all of them
    /// (ordered among themselves by their priority). For ``atQueue(_:)`` and main-actor
    /// subscribers the priority orders the enqueueing; their queue decides when each runs.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).priority(.high).next { event in print("first:", event.userID) }
    /// bus.on(LoginEvent.self).next { event in print("then:", event.userID) }
    /// ```
    @inlinable
    public consuming func priority(_ priority: EventPriority) -> Self {
        options.traits.priority = priority
        return self
    }

    /// Makes this subscriber a monitor: it runs after every handler of the dispatch, cannot stop
    /// it, and sees the events a `handle` handler stopped too. For analytics, logging, debugging.
    ///
    /// A monitor maker offers `next`, never `handle` (a compile error). Combine it with
    /// ``atQueue(_:)`` or ``onMainActor()`` in either order.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).monitor().next { event in print("analytics:", event.userID) }
    /// ```
    public func monitor() -> SubscriberMaker<E, Owner, Delivery.Monitored> {
        var copy = retyped(Owner.self, Delivery.Monitored.self)
        copy.options.traits.isMonitor = true
        return copy
    }

    /// Delivers the sticky events the bus keeps for this subscriber's type and keys (every key,
    /// without ``ofType(_:)``) as soon as it subscribes, in dispatch order, then the live ones.
    ///
    /// Registration and the replay's snapshot happen in one critical section: a concurrent sticky
    /// dispatch is delivered once, live or replayed, never both, never neither. A synchronous or
    /// main-actor (registered on the main thread) subscriber gets the replay on the subscribing
    /// thread before `next` returns (a dispatch on another thread at the same time may reach it
    /// first); a queued or main-actor (registered off the main thread) subscriber gets it enqueued
    /// before any live delivery. A ``StickyPolicy/untilDelivered`` event is taken by the first
    /// replaying subscriber and is gone for the others; if that subscriber's handler never runs for
    /// it (disposed, or its owner gone, before its queue ran), it is kept for the next taker.
    ///
    /// ```swift
    /// bus.dispatch(LoginEvent(userID: "42"), sticky: .latest)
    /// bus.on(LoginEvent.self).replayingSticky().next { event in print("user:", event.userID) }   // "user: 42" at once
    /// ```
    @inlinable
    public consuming func replayingSticky() -> Self {
        options.traits.replaysSticky = true
        return self
    }

    /// Delivers the events asynchronously on `queue` instead of synchronously on the dispatching
    /// thread. Replaces an earlier `atQueue` or ``onMainActor()``.
    ///
    /// The subscriber gets events in dispatch order: the bus's deliveries to `queue` wait in one
    /// mailbox and run one at a time, in order, across its subscriptions on that queue (on a
    /// concurrent queue too). ``buffering(_:)`` bounds them (see <doc:FlowControl>). The dispose
    /// guarantee covers deliveries already enqueued: once `dispose()` returns, none of them starts. For UI state
    /// that the compiler must check, prefer ``onMainActor()`` to `atQueue(.main)`.
    ///
    /// ```swift
    /// let audit = DispatchQueue(label: "audit")
    /// let token = bus.on(LoginEvent.self).atQueue(audit).next { event in print("audit", event.userID) }
    /// ```
    public func atQueue(_ queue: DispatchQueue) -> SubscriberMaker<E, Owner, EventDelivery.Queued> {
        var copy = retyped(Owner.self, EventDelivery.Queued.self)
        copy.options.queue = queue
        return copy
    }

    /// Delivers the events on the main actor, to a `@MainActor` handler that the compiler checks.
    /// Replaces an earlier ``atQueue(_:)``.
    ///
    /// The handler given to the returned maker's `next` is `@MainActor`, so it may read and write
    /// main-actor state (a view model, a view controller) and the compiler verifies it.
    ///
    /// - **Dispatch on the main thread**: the handler is called synchronously and has run when
    ///   `dispatch` returns.
    /// - **Dispatch on any other thread**: the call is enqueued on the main queue, in dispatch
    ///   order; a later dispatch made on the main thread is delivered at once, so it can overtake
    ///   deliveries still waiting. The bus never uses `MainActor.assumeIsolated`, so a background
    ///   dispatch cannot trap.
    ///
    /// Once `dispose()` has returned, no delivery starts, enqueued ones included. The owner of a
    /// main-actor subscription is only ever released by the bus on the main queue.
    ///
    /// ```swift
    /// @MainActor final class InboxModel {
    ///     var unread = 0
    ///     init(bus: EventBus) {
    ///         bus.on(ChatMessage.self).onMainActor().freeWith(self).next { model, _ in
    ///             model.unread += 1   // main-actor state, checked by the compiler
    ///         }
    ///     }
    /// }
    /// ```
    public func onMainActor() -> SubscriberMaker<E, Owner, EventDelivery.MainActor> {
        var copy = retyped(Owner.self, EventDelivery.MainActor.self)
        copy.options.queue = nil
        return copy
    }

    /// Binds the subscription to `actor`, which owns it (weakly, as ``freeWith(_:)``), and delivers
    /// the events on it, to a handler isolated to it: `next { actor, event in }` receives the actor
    /// as an `isolated` parameter, so the handler reads and writes its state with no `await`, and
    /// the compiler rejects touching any other actor's. Replaces an earlier owner, ``atQueue(_:)``
    /// or ``onMainActor()``.
    ///
    /// - **Order**: the actor's subscriptions' events run on it one at a time, in the order they
    ///   were dispatched (from any number of threads: the order in which their deliveries reached
    ///   its mailbox), whatever the tasks' priorities, in bounded batches between which the actor
    ///   runs its other work. Each runs after the dispatch that sent it has moved on.
    /// - **Dispose**: once `dispose()` has returned, or the actor is deallocated, no delivery
    ///   starts, enqueued ones included. The bus holds the actor weakly: it retains it while a batch
    ///   of its handlers runs on it (and, as for any owner, for a moment when it checks that the
    ///   owner is alive).
    /// - A handler cannot stop the dispatch (`handle` is unavailable: it runs after it). Its errors
    ///   go to ``EventConfigurable/handlerErrorHandler``.
    ///
    /// Inside the actor, `subscribe(E.self)` (``EventSubscribing``) is this with `self`.
    ///
    /// ```swift
    /// actor UnreadCounter {
    ///     var count = 0
    ///     func start(on bus: EventBus) {
    ///         bus.on(ChatMessage.self).ofType("room-7").isolated(to: self).next { counter, _ in
    ///             counter.count += 1   // isolated to the actor: no await, checked by the compiler
    ///         }
    ///     }
    /// }
    /// ```
    public func isolated<A: Actor>(to actor: A) -> SubscriberMaker<E, A, EventDelivery.Isolated> {
        var copy = freeWith(actor).retyped(A.self, EventDelivery.Isolated.self)
        copy.options.queue = nil
        return copy
    }

    /// This maker delivering on the main actor within a main-actor chain's post, which always runs
    /// on the main queue (``MainActorEventNode/on(_:)``): `handle` is offered too.
    func onMainActorChain() -> SubscriberMaker<E, Owner, EventDelivery.MainActorChain> {
        var copy = retyped(Owner.self, EventDelivery.MainActorChain.self)
        copy.options.queue = nil
        return copy
    }

    /// Binds the subscription to `owner`'s lifetime: it ends when `owner` is deallocated.
    ///
    /// The bus holds `owner` weakly. After `owner` is gone its handler is never called again, and
    /// the handler (with what it captured) is released at the next dispatch that reaches it, by
    /// the bus's incremental sweep, or at ``EventBus/purge()``, whichever comes first. Passing
    /// `nil`, or an owner that is deallocated before `next`, yields an inert, already disposed token.
    /// A later `freeWith` replaces the owner.
    ///
    /// ```swift
    /// @MainActor final class Badge: EventSubscribing {
    ///     var count = 0
    ///     init(bus: EventBus) {
    ///         bus.on(ChatMessage.self).onMainActor().freeWith(self).next { owner, _ in owner.count += 1 }
    ///     }
    /// }
    /// ```
    public func freeWith<NewOwner: AnyObject>(_ owner: NewOwner?) -> SubscriberMaker<E, NewOwner, Delivery> {
        var copy = retyped(NewOwner.self, Delivery.self)
        copy.options.traits.isOwned = true
        copy.options.traits.ownerType = NewOwner.self
        copy.owner = owner
        return copy
    }

    /// Marks the subscription as the library's or an integration's own, not the app's: it is left
    /// out of ``EventBus/subscriptionCount`` and ``EventBus/subscriptionCount(of:)`` and listed with
    /// ``SubscriptionInfo/isInternal`` set. For an integration's own plumbing (the test kit's
    /// recorders), never for what the app asked for (a bridge is the app's subscription).
    ///
    /// ```swift
    /// @_spi(Integrations) import EventBus
    ///
    /// let token = bus.on(LoginEvent.self).markedInternal().next { event in forward(event) }
    /// ```
    @_spi(Integrations)
    @inlinable
    public consuming func markedInternal() -> Self {
        options.traits.isInternal = true
        return self
    }

    /// Registers `handling` and returns the token, or an inert token if the owner is already gone
    /// or the event type refuses the subscription.
    func register(_ handling: Handling<E>, at callSite: CallSite) -> EventToken {
        let owner = self.owner  // held until registered
        let made = handling.body(in: bus.core, buffering: options.buffering, replays: options.traits.replaysSticky)
        guard let body = made else { return .inert }
        defer { withExtendedLifetime(owner) {} }
        fileBackPressure(of: body)
        return register(body: body, at: callSite)
    }

    /// Files the lane of `body` for ``EventBus/send(_:)`` if it has a back-pressure bound.
    func fileBackPressure(of body: Body<E>) {
        guard let lane = body.lane, lane.highWatermark != nil else { return }
        bus.core.backPressure.add(lane, type: ObjectIdentifier(E.self), keys: options.keys.unique)
    }

    /// Registers `body` and returns the token, or an inert token if the owner is already gone or
    /// the event type refuses the subscription.
    func register(body: Body<E>, at callSite: CallSite) -> EventToken {
        let traits = options.traits
        let owner = self.owner  // held until registered
        if traits.isOwned && owner == nil { return .inert }
        let core = bus.core
        let primary = core.makeNodes(keys: options.keys, body: body, traits: traits, owner: owner, callSite: callSite)
        let token = core.subscribe(primary, of: E.self, traits: traits, deliversNow: body.deliversNow, bus: bus)
        withExtendedLifetime(owner) {}
        return token
    }

    /// Registers the commonest shape, `next { event in … }` with no owner, and returns the token:
    /// called on the dispatching thread, its node holds the handler and nothing else (see
    /// `PlainSubscription`); on a queue, as ``register(_:at:)``. (Only makers with no owner call it.)
    ///
    /// Inlinable, with `EventBus.on(_:)`, the maker's initializer and the plain `next`: the maker
    /// chain of the commonest subscribe is then specialized where it is written, instead of running
    /// the library's unspecialized generic code (its fields read through type metadata, its copies
    /// and its destruction through value witnesses). What it calls stays in the library.
    @inlinable
    func register(_ handler: @escaping @Sendable (E) -> Void, at callSite: CallSite) -> EventToken {
        if let queue = options.queue { return registerQueued(handler, on: queue, at: callSite) }
        let core = bus.core
        let primary = core.makePlainNodes(
            E.self, keys: options.keys, handler: handler, traits: options.traits, callSite: callSite)
        return core.subscribe(primary, of: E.self, traits: options.traits, deliversNow: true, bus: bus)
    }

    /// Registers `handler` to run on `queue`: the queued shape of the plain `register(_:at:)`, which
    /// is inlined into the caller (this keeps the `Handling` out of it).
    @usableFromInline
    func registerQueued(_ handler: @escaping @Sendable (E) -> Void, on queue: DispatchQueue, at callSite: CallSite)
        -> EventToken
    {
        register(.queue(queue, .event(handler)), at: callSite)
    }

    /// The nonisolated handling of `callback`: on the dispatching thread, or on the queue.
    func body(_ callback: Callback<E>) -> Handling<E> {
        // Not `Optional.map`: a generic call over `Handling<E>` looks up its metadata at run time.
        guard let queue = options.queue else { return .immediate(callback) }
        return .queue(queue, callback)
    }
}

// The owner is held weakly as `AnyObject`, and it is only ever an `Owner`, which is Sendable.
extension SubscriberMaker: @unchecked Sendable where Owner: Sendable {}

extension SubscriberMaker where E: Event, E.EventTypeKey == NoEventTypeKey {
    /// Warns at compile time: this event type declares no ``Event/eventType``, so a keyed
    /// subscriber would never receive anything. Declare the key in the event, or drop `ofType`.
    ///
    /// Deprecated rather than unavailable so that the compiler picks it over the general
    /// ``ofType(_:)`` (it prefers an available overload to an unavailable one, and the more
    /// constrained of two available ones): the warning is the point, the subscription is the same.
    ///
    /// ```swift
    /// struct ChatMessage: Event {
    ///     let room: String
    ///     var eventType: String { room }   // without it, ofType("room-7") would warn
    /// }
    /// ```
    // Kept out of the documentation: it is the general `ofType(_:)` plus a warning, and the docs'
    // links to `ofType(_:)` would otherwise be ambiguous.
    @_documentation(visibility: internal)
    @available(
        *, deprecated,
        message:
            "this event type declares no 'eventType', so a subscriber with 'ofType' never receives anything: declare 'var eventType: String' in the event, or drop 'ofType'"
    )
    @inlinable
    public consuming func ofType(_ key: String) -> Self {
        options.keys.append(key)
        return self
    }
}
