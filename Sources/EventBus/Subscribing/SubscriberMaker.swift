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
/// ```swift
/// final class ChatScreen: EventSubscribing {
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
    /// final class Badge: EventSubscribing {
    ///     var count = 0
    ///     init(bus: EventBus) {
    ///         bus.on(ChatMessage.self).freeWith(self).next { owner, _ in owner.count += 1 }
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

// `handle` decides, within the dispatch, whether the handlers after it run: a handler that runs
// later, on a queue or the main actor, or a monitor, cannot. Without these, the compiler's error
// names the maker's internal types; with them, it says why.

extension SubscriberMaker where Delivery == EventDelivery.MainActor {
    /// Unavailable: a main-actor handler may run after the dispatch (a dispatch from another
    /// thread enqueues it), so it cannot stop it. Use `next`, or a ``MainActorEventNode``, whose
    /// main-actor handlers run within the post and may `handle`.
    ///
    /// ```swift
    /// bus.on(BackTapped.self).onMainActor().next { _ in print("back") }
    /// ```
    @available(
        *, unavailable,
        message:
            "'handle' needs a synchronous subscriber: after 'onMainActor()' the handler may run after the dispatch, and a monitor never stops it; use 'next' (a MainActorEventNode's own makers offer 'handle')"
    )
    public func handle(_ handler: @escaping @MainActor @Sendable (E) -> EventPropagation) -> EventToken {
        fatalError("unavailable")
    }

    /// Unavailable, as the one without an owner.
    ///
    /// ```swift
    /// subscribe(BackTapped.self).next { _, _ in print("back") }
    /// ```
    @available(
        *, unavailable,
        message:
            "'handle' needs a synchronous subscriber: after 'onMainActor()' the handler may run after the dispatch, and a monitor never stops it; use 'next' (a MainActorEventNode's own makers offer 'handle')"
    )
    public func handle(_ handler: @escaping @MainActor @Sendable (Owner, E) -> EventPropagation) -> EventToken {
        fatalError("unavailable")
    }
}

extension SubscriberMaker where Delivery == EventDelivery.Queued {
    /// Unavailable: a queued handler runs after the dispatch, so it cannot stop it. Use `next`.
    ///
    /// ```swift
    /// bus.on(BackTapped.self).atQueue(.main).next { _ in print("back") }
    /// ```
    @available(
        *, unavailable,
        message:
            "'handle' needs a synchronous subscriber: after 'atQueue(_:)' the handler runs after the dispatch, so it cannot stop it; use 'next'"
    )
    public func handle(_ handler: @escaping @Sendable (E) -> EventPropagation) -> EventToken {
        fatalError("unavailable")
    }

    /// Unavailable, as the one without an owner.
    ///
    /// ```swift
    /// subscribe(BackTapped.self).next { _, _ in print("back") }
    /// ```
    @available(
        *, unavailable,
        message:
            "'handle' needs a synchronous subscriber: after 'atQueue(_:)' the handler runs after the dispatch, so it cannot stop it; use 'next'"
    )
    public func handle(_ handler: @escaping @Sendable (Owner, E) -> EventPropagation) -> EventToken {
        fatalError("unavailable")
    }
}

extension SubscriberMaker where Delivery == EventDelivery.Monitor {
    /// Unavailable: a monitor runs after every handler and never stops the dispatch. Use `next`.
    ///
    /// ```swift
    /// bus.on(BackTapped.self).monitor().next { _ in print("analytics: back") }
    /// ```
    @available(
        *, unavailable,
        message: "a 'monitor()' subscriber runs after every handler and cannot stop the dispatch: use 'next'"
    )
    public func handle(_ handler: @escaping @Sendable (E) -> EventPropagation) -> EventToken {
        fatalError("unavailable")
    }

    /// Unavailable, as the one without an owner.
    ///
    /// ```swift
    /// subscribe(BackTapped.self).next { _, _ in print("back") }
    /// ```
    @available(
        *, unavailable,
        message: "a 'monitor()' subscriber runs after every handler and cannot stop the dispatch: use 'next'"
    )
    public func handle(_ handler: @escaping @Sendable (Owner, E) -> EventPropagation) -> EventToken {
        fatalError("unavailable")
    }
}

extension SubscriberMaker where Delivery: NonisolatedDelivery, Owner == Never {
    /// Registers `handler` and returns the subscription's token: keep it, or the subscription lasts
    /// as long as the bus.
    ///
    /// The handler runs on the dispatching thread, before `dispatch` returns, or on the
    /// ``atQueue(_:)`` queue. With no owner, the subscription lives until the token is disposed
    /// (dropping the token does not end it), a ``DisposeBag`` holding it is emptied or deallocated,
    /// or the bus is deallocated. The result is not discardable, so the compiler warns about a
    /// dropped token: write `_ = bus.on(…).next { … }` for a subscription meant to last as long as
    /// the bus, or bind it to an owner with ``freeWith(_:)``. `file` and `line` record where it was
    /// made; leave them to their defaults.
    ///
    /// ```swift
    /// let token = bus.on(LoginEvent.self).next { event in print(event.userID) }
    /// token.dispose()
    /// ```
    @inlinable
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (E) -> Void
    ) -> EventToken {
        register(handler, at: CallSite(fileID: file, line: line))
    }

    /// Registers the throwing `handler` and returns the subscription's token: keep it, or the
    /// subscription lasts as long as the bus.
    ///
    /// As the non-throwing `next`; an error the handler throws never reaches the dispatcher: the
    /// other subscribers still run, and the bus hands the error to its
    /// ``EventConfigurable/handlerErrorHandler`` on the handler's thread (without one, debug builds print
    /// the first error of each subscription).
    ///
    /// ```swift
    /// struct InvalidUser: Error {}
    /// let token = bus.on(LoginEvent.self).next { event throws in
    ///     guard !event.userID.isEmpty else { throw InvalidUser() }
    ///     print("welcome", event.userID)
    /// }
    /// ```
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (E) throws -> Void
    ) -> EventToken {
        register(
            body(
                .general { _, event in
                    try handler(event)
                    return .continue
                }), at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery: NonisolatedDelivery, Owner: AnyObject {
    /// Unavailable: an owner-bound handler receives its owner. Use `next { owner, event in … }`.
    ///
    /// A handler that captures `self` strongly keeps its owner alive, and the subscription with it,
    /// forever. The owner-passing form needs no capture: use the `owner` it receives, not `self`
    /// (the compiler cannot see a capture of `self` in it, which leaks the same way). To ignore the
    /// owner, write `next { _, event in … }`. The owner-passing form needs a `Sendable` owner (the
    /// handler may run on another thread); an owner that is not `Sendable` keeps unowned
    /// subscriptions' tokens in a ``DisposeBag`` property instead, which ends them with it.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).next { owner, event in owner.render(event) }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner: write 'next { owner, event in owner.… }' and use 'owner', not 'self' (a handler that captures 'self' keeps it alive, and its subscription with it)"
    )
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (E) -> Void
    ) -> EventToken {
        register(body(.event(handler)), at: CallSite(fileID: file, line: line))
    }

    /// Unavailable, as the non-throwing one: use `next { owner, event throws in … }`.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).next { owner, event throws in owner.render(event) }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner: write 'next { owner, event in owner.… }' and use 'owner', not 'self' (a handler that captures 'self' keeps it alive, and its subscription with it)"
    )
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (E) throws -> Void
    ) -> EventToken {
        register(body(.event { _ in }), at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery: NonisolatedDelivery, Owner: AnyObject & Sendable {
    /// Registers `handler`, which receives the owner (retained for the call) with each event, and
    /// returns the subscription's token (which you may drop: the owner ends the subscription).
    ///
    /// The handler never runs once the owner is gone, so it needs no `[weak self]`: capture nothing
    /// and use `owner`. Runs on the dispatching thread, or on the ``atQueue(_:)`` queue; for an owner
    /// isolated to the main actor, use ``onMainActor()``. If the owner is already gone, nothing is
    /// registered and the returned token is already disposed.
    ///
    /// ```swift
    /// final class Greeter: EventSubscribing {
    ///     init(bus: EventBus) {
    ///         bus.on(LoginEvent.self).freeWith(self).next { owner, event in owner.greet(event.userID) }
    ///     }
    ///     func greet(_ userID: String) { print("Hello \(userID)") }
    /// }
    /// ```
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (Owner, E) -> Void
    ) -> EventToken {
        register(
            body(
                .general { owner, event in
                    handler(passed(owner), event)
                    return .continue
                }), at: CallSite(fileID: file, line: line))
    }

    /// Registers the throwing `handler`, which receives the owner (retained for the call) with
    /// each event, and returns the subscription's token. Errors go to
    /// ``EventConfigurable/handlerErrorHandler``, as for the throwing `next { event throws in }`.
    ///
    /// ```swift
    /// final class Archiver: EventSubscribing {
    ///     init(bus: EventBus) {
    ///         bus.on(LoginEvent.self).freeWith(self).next { owner, event throws in try owner.archive(event) }
    ///     }
    ///     func archive(_ event: LoginEvent) throws {}
    /// }
    /// ```
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (Owner, E) throws -> Void
    ) -> EventToken {
        register(
            body(
                .general { owner, event in
                    try handler(passed(owner), event)
                    return .continue
                }), at: CallSite(fileID: file, line: line))
    }
}

/// The owner a subscription's handler is called with: the bus only ever passes back the live
/// owner the subscription was made with (owned subscriptions are never called without one).
@inline(__always)
private func passed<Owner: AnyObject>(_ owner: AnyObject?) -> Owner {
    unsafeDowncast(owner.unsafelyUnwrapped, to: Owner.self)
}

extension SubscriberMaker where Delivery == EventDelivery.Synchronous, Owner == Never {
    /// Registers `handler`, which decides for each event whether the dispatch goes on to the next
    /// subscribers (``EventPropagation/continue``) or stops here (``EventPropagation/stop``), and
    /// returns the subscription's token: keep it, or the subscription lasts as long as the bus.
    ///
    /// `.stop` ends the current dispatch for every subscriber not yet called, of every key and
    /// supertype, except ``monitor()`` subscribers. Runs on the dispatching thread, before
    /// `dispatch` returns. Only synchronous makers offer `handle`: after ``atQueue(_:)``,
    /// ``onMainActor()`` or ``monitor()`` it is a compile error, since those handlers run too late
    /// (or must not) decide. Combine it with ``priority(_:)`` to decide before the others. (A
    /// ``MainActorEventNode``'s makers offer a `@MainActor` `handle`: its posts run on the main
    /// queue.)
    ///
    /// ```swift
    /// let drawerIsOpen = false
    /// let token = bus.on(BackTapped.self).priority(.high).handle { _ in
    ///     drawerIsOpen ? .stop : .continue
    /// }
    /// ```
    public func handle(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (E) -> EventPropagation
    ) -> EventToken {
        register(.immediate(.general { _, event in handler(event) }), at: CallSite(fileID: file, line: line))
    }

    /// Registers the throwing `handler`, which decides whether the dispatch goes on as the
    /// non-throwing `handle` does, and returns the subscription's token.
    ///
    /// An error it throws never reaches the dispatcher: it counts as ``EventPropagation/continue``
    /// (the next subscribers run), and the bus hands it to its ``EventConfigurable/handlerErrorHandler`` on
    /// the dispatching thread (without one, debug builds print the first error of each
    /// subscription).
    ///
    /// ```swift
    /// struct Locked: Error {}
    /// let token = bus.on(BackTapped.self).priority(.high).handle { _ throws in
    ///     if Bool.random() { throw Locked() }
    ///     return .stop
    /// }
    /// ```
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (E) throws -> EventPropagation
    ) -> EventToken {
        register(.immediate(.general { _, event in try handler(event) }), at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery == EventDelivery.Synchronous, Owner: AnyObject {
    /// Unavailable: an owner-bound handler receives its owner. Use `handle { owner, event in … }`.
    ///
    /// ```swift
    /// subscribe(BackTapped.self).handle { owner, _ in .continue }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner: write 'handle { owner, event in owner.… }' and use 'owner', not 'self' (a handler that captures 'self' keeps it alive, and its subscription with it)"
    )
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (E) -> EventPropagation
    ) -> EventToken {
        register(.immediate(.general { _, event in handler(event) }), at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery == EventDelivery.Synchronous, Owner: AnyObject & Sendable {
    /// Registers `handler`, which receives the owner (retained for the call) with each event and
    /// decides whether the dispatch goes on, as the `handle` without an owner does. Never called
    /// once the owner is gone.
    ///
    /// ```swift
    /// final class Drawer: EventSubscribing, @unchecked Sendable {
    ///     var isOpen = false   // (a real drawer would be @MainActor; see onMainActor())
    ///     init(bus: EventBus) {
    ///         bus.on(BackTapped.self).priority(.high).freeWith(self).handle { drawer, _ in
    ///             drawer.isOpen ? .stop : .continue
    ///         }
    ///     }
    /// }
    /// ```
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (Owner, E) -> EventPropagation
    ) -> EventToken {
        register(
            .immediate(.general { owner, event in handler(passed(owner), event) }),
            at: CallSite(fileID: file, line: line))
    }

    /// Registers the throwing `handler`, which receives the owner with each event and decides
    /// whether the dispatch goes on; an error it throws counts as ``EventPropagation/continue`` and
    /// goes to the bus's ``EventConfigurable/handlerErrorHandler``, on the dispatching thread. Never called
    /// once the owner is gone.
    ///
    /// ```swift
    /// final class Gate: EventSubscribing, Sendable {
    ///     struct Closed: Error {}
    ///     init(bus: EventBus) {
    ///         bus.on(BackTapped.self).freeWith(self).handle { gate, _ throws in
    ///             throw Closed()
    ///         }
    ///     }
    /// }
    /// ```
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (Owner, E) throws -> EventPropagation
    ) -> EventToken {
        register(
            .immediate(.general { owner, event in try handler(passed(owner), event) }),
            at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery: MainActorDelivery, Owner == Never {
    /// Registers the `@MainActor` `handler` and returns the subscription's token: keep it, or the
    /// subscription lasts as long as the bus.
    ///
    /// Runs on the main actor: before `dispatch` returns when dispatched on the main thread,
    /// otherwise soon after, enqueued on the main queue in dispatch order (on a
    /// ``MainActorEventNode``, always within the post, which runs on the main queue). With no owner, the
    /// subscription lives until the token is disposed (dropping the token does not end it; the
    /// compiler warns about a dropped result), a ``DisposeBag`` holding it is emptied or
    /// deallocated, or the bus is deallocated. Once `dispose()` has returned, no delivery starts,
    /// not even one already enqueued.
    ///
    /// ```swift
    /// @MainActor final class SessionModel { var userID = "" }
    /// @MainActor func bind(_ model: SessionModel, to bus: EventBus) -> EventToken {
    ///     bus.on(LoginEvent.self).onMainActor().next { event in
    ///         model.userID = event.userID   // `model` is @MainActor
    ///     }
    /// }
    /// ```
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @MainActor @Sendable (E) -> Void
    ) -> EventToken {
        register(
            .mainActor { _, event in
                handler(event)
                return .continue
            }, at: CallSite(fileID: file, line: line))
    }

    /// Registers the throwing `@MainActor` `handler` and returns the subscription's token. Errors
    /// go to ``EventConfigurable/handlerErrorHandler``, on the main actor.
    ///
    /// ```swift
    /// struct Rejected: Error {}
    /// @MainActor func bind(_ bus: EventBus) -> EventToken {
    ///     bus.on(LoginEvent.self).onMainActor().next { event throws in
    ///         if event.userID.isEmpty { throw Rejected() }
    ///     }
    /// }
    /// ```
    public func next(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (E) throws -> Void
    ) -> EventToken {
        register(
            .mainActor { _, event in
                try handler(event)
                return .continue
            }, at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery: MainActorDelivery, Owner: AnyObject {
    /// Unavailable: an owner-bound handler receives its owner. Use `next { owner, event in … }`.
    ///
    /// A handler that captures `self` strongly keeps its owner alive, and the subscription with it,
    /// forever. The owner-passing form needs no capture: use the `owner` it receives, not `self`
    /// (the compiler cannot see a capture of `self` in it, which leaks the same way).
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).onMainActor().next { owner, event in owner.render(event) }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner: write 'next { owner, event in owner.… }' and use 'owner', not 'self' (a handler that captures 'self' keeps it alive, and its subscription with it)"
    )
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @MainActor @Sendable (E) -> Void
    ) -> EventToken {
        register(
            .mainActor { _, event in
                handler(event)
                return .continue
            }, at: CallSite(fileID: file, line: line))
    }

    /// Unavailable, as the non-throwing one: use `next { owner, event throws in … }`.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).onMainActor().next { owner, event throws in owner.render(event) }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner: write 'next { owner, event in owner.… }' and use 'owner', not 'self' (a handler that captures 'self' keeps it alive, and its subscription with it)"
    )
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (E) throws -> Void
    ) -> EventToken {
        register(
            .mainActor { _, event in
                try handler(event)
                return .continue
            }, at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery: MainActorDelivery, Owner: AnyObject & Sendable {
    /// Registers the `@MainActor` `handler`, which receives the owner (retained for the call) with
    /// each event, and returns the subscription's token (which you may drop: the owner ends the
    /// subscription).
    ///
    /// The handler runs on the main actor, and never once the owner is gone (enqueued deliveries
    /// included), so it needs no `[weak self]`: capture nothing and use `owner`. If the owner is
    /// already gone, nothing is registered and the returned token is already disposed.
    ///
    /// ```swift
    /// @MainActor final class ProfileViewModel: EventSubscribing {
    ///     var title = ""
    ///     func start() {
    ///         subscribe(LoginEvent.self).onMainActor().next { owner, event in
    ///             owner.title = event.userID   // owner is this @MainActor view model
    ///         }
    ///     }
    /// }
    /// ```
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (Owner, E) -> Void
    ) -> EventToken {
        register(
            .mainActor { owner, event in
                handler(passed(owner), event)
                return .continue
            }, at: CallSite(fileID: file, line: line))
    }

    /// Registers the throwing `@MainActor` `handler`, which receives the owner with each event.
    /// Errors go to ``EventConfigurable/handlerErrorHandler``, on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Editor: EventSubscribing {
    ///     func start() {
    ///         subscribe(LoginEvent.self).onMainActor().next { owner, event throws in try owner.load(event) }
    ///     }
    ///     func load(_ event: LoginEvent) throws {}
    /// }
    /// ```
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (Owner, E) throws -> Void
    ) -> EventToken {
        register(
            .mainActor { owner, event in
                try handler(passed(owner), event)
                return .continue
            }, at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery == EventDelivery.MainActorChain, Owner == Never {
    /// Registers the `@MainActor` `handler`, which decides for each event whether the post goes on
    /// (``EventPropagation/continue``) or stops here (``EventPropagation/stop``), and returns the
    /// subscription's token: keep it, or the subscription lasts as long as its node.
    ///
    /// Offered by a ``MainActorEventNode``'s makers only. Its posts always run on the main queue, so
    /// the handler is called on the main actor, synchronously within the post, and decides as a
    /// synchronous `handle` does on an ``EventNode``: `.stop` lets its node finish (the node's
    /// monitors run) and ends the event for every node above, except for `monitor()` subscribers,
    /// which still see it. After ``atQueue(_:)``, ``onMainActor()`` or ``monitor()``, and on the
    /// bus's ``onMainActor()`` makers (whose deliveries from another thread are enqueued), `handle`
    /// is a compile error. Were such a subscription ever reached off the main queue (a main-actor
    /// node's post never is), its call would be enqueued on the main queue as a `next`'s, and its
    /// `.stop` would not apply. The subscription lives until the token is disposed (dropping the
    /// token does not end it), a ``DisposeBag`` holding it is emptied or deallocated, or the node is
    /// deallocated.
    ///
    /// ```swift
    /// @MainActor final class Drawer { var isOpen = false }
    /// @MainActor func bind(_ drawer: Drawer, to node: MainActorEventNode) -> EventToken {
    ///     node.on(BackTapped.self).priority(.high).handle { _ in
    ///         drawer.isOpen ? .stop : .continue   // the nodes above do not see it while open
    ///     }
    /// }
    /// ```
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (E) -> EventPropagation
    ) -> EventToken {
        register(.mainActor { _, event in handler(event) }, at: CallSite(fileID: file, line: line))
    }

    /// Registers the throwing `@MainActor` `handler`, which decides whether the post goes on, as
    /// the non-throwing `handle` does, and returns the subscription's token.
    ///
    /// An error it throws never reaches the poster: it counts as ``EventPropagation/continue``, and
    /// goes to the node's ``EventConfigurable/handlerErrorHandler``, on the main actor.
    ///
    /// ```swift
    /// struct Rejected: Error {}
    /// @MainActor func guardBack(_ node: MainActorEventNode) -> EventToken {
    ///     node.on(BackTapped.self).handle { _ throws in
    ///         if Bool.random() { throw Rejected() }
    ///         return .stop
    ///     }
    /// }
    /// ```
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (E) throws -> EventPropagation
    ) -> EventToken {
        register(.mainActor { _, event in try handler(event) }, at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery == EventDelivery.MainActorChain, Owner: AnyObject {
    /// Unavailable: an owner-bound handler receives its owner. Use `handle { owner, event in … }`.
    ///
    /// ```swift
    /// node.on(BackTapped.self).freeWith(drawer).handle { drawer, _ in drawer.isOpen ? .stop : .continue }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner: write 'handle { owner, event in owner.… }' and use 'owner', not 'self' (a handler that captures 'self' keeps it alive, and its subscription with it)"
    )
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (E) -> EventPropagation
    ) -> EventToken {
        register(.mainActor { _, event in handler(event) }, at: CallSite(fileID: file, line: line))
    }

    /// Unavailable, as the non-throwing one: use `handle { owner, event throws in … }`.
    ///
    /// ```swift
    /// node.on(BackTapped.self).freeWith(drawer).handle { drawer, _ throws in try drawer.close() }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner: write 'handle { owner, event in owner.… }' and use 'owner', not 'self' (a handler that captures 'self' keeps it alive, and its subscription with it)"
    )
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (E) throws -> EventPropagation
    ) -> EventToken {
        register(.mainActor { _, event in try handler(event) }, at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery == EventDelivery.MainActorChain, Owner: AnyObject & Sendable {
    /// Registers the `@MainActor` `handler`, which receives the owner (retained for the call) with
    /// each event and decides whether the post goes on, as the `handle` without an owner does, and
    /// returns the subscription's token (which you may drop: the owner ends the subscription).
    ///
    /// Runs on the main actor, within the post; never once the owner is gone, so it needs no
    /// `[weak self]`: capture nothing and use `owner`. If the owner is already gone, nothing is
    /// registered and the returned token is already disposed.
    ///
    /// ```swift
    /// @MainActor final class DrawerModel {
    ///     let eventNode = MainActorEventNode(name: "Drawer")
    ///     var isOpen = false
    ///     init() {
    ///         eventNode.on(BackTapped.self).freeWith(self).handle { drawer, _ in
    ///             guard drawer.isOpen else { return .continue }
    ///             drawer.isOpen = false
    ///             return .stop   // consumed: the screen above does not pop
    ///         }
    ///     }
    /// }
    /// ```
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (Owner, E) -> EventPropagation
    ) -> EventToken {
        register(.mainActor { owner, event in handler(passed(owner), event) }, at: CallSite(fileID: file, line: line))
    }

    /// Registers the throwing `@MainActor` `handler`, which receives the owner with each event and
    /// decides whether the post goes on. An error it throws counts as
    /// ``EventPropagation/continue`` and goes to the node's
    /// ``EventConfigurable/handlerErrorHandler``, on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Form {
    ///     let eventNode = MainActorEventNode(name: "Form")
    ///     init() {
    ///         eventNode.on(BackTapped.self).freeWith(self).handle { form, _ throws in
    ///             try form.save()
    ///             return .continue
    ///         }
    ///     }
    ///     func save() throws {}
    /// }
    /// ```
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (Owner, E) throws -> EventPropagation
    ) -> EventToken {
        register(
            .mainActor { owner, event in try handler(passed(owner), event) }, at: CallSite(fileID: file, line: line))
    }
}
