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
///   ``EventDelivery/Queued`` (after ``atQueue(_:)``) or ``EventDelivery/MainActor`` (after
///   ``onMainActor()``, whose handlers are `@MainActor`).
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
public struct SubscriberMaker<E: Event, Owner, Delivery: EventDeliveryStyle> {
    let bus: EventBus
    var keys: [String] = []
    var queue: DispatchQueue?
    var isOwned = false
    weak var owner: AnyObject?

    init(bus: EventBus) {
        self.bus = bus
    }

    /// This maker with another owner or delivery type (the options carry over).
    private func retyped<NewOwner, NewDelivery>(
        _: NewOwner.Type = NewOwner.self, _: NewDelivery.Type = NewDelivery.self
    ) -> SubscriberMaker<E, NewOwner, NewDelivery> {
        var maker = SubscriberMaker<E, NewOwner, NewDelivery>(bus: bus)
        maker.keys = keys
        maker.queue = queue
        maker.isOwned = isOwned
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
    public func ofType(_ key: String) -> Self {
        var copy = self
        copy.keys.append(key)
        return copy
    }

    /// Delivers the events asynchronously on `queue` instead of synchronously on the dispatching
    /// thread. Replaces an earlier `atQueue` or ``onMainActor()``.
    ///
    /// On a serial queue the subscriber gets events in dispatch order. The dispose guarantee covers
    /// deliveries already enqueued: once `dispose()` returns, none of them starts. For UI state
    /// that the compiler must check, prefer ``onMainActor()`` to `atQueue(.main)`.
    ///
    /// ```swift
    /// let audit = DispatchQueue(label: "audit")
    /// let token = bus.on(LoginEvent.self).atQueue(audit).next { event in print("audit", event.userID) }
    /// ```
    public func atQueue(_ queue: DispatchQueue) -> SubscriberMaker<E, Owner, EventDelivery.Queued> {
        var copy = retyped(Owner.self, EventDelivery.Queued.self)
        copy.queue = queue
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
        copy.queue = nil
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
        copy.isOwned = true
        copy.owner = owner
        return copy
    }

    /// Registers `body` and returns the token, or an inert token if the owner is already gone or
    /// the event type refuses the subscription.
    func register(_ body: Body<E>) -> EventToken {
        let owner = self.owner
        if isOwned && owner == nil { return .inert }
        // A key given twice counts once (deduplicated here, so that chaining `ofType` stays O(1)).
        var unique = keys
        if keys.count > 1 {
            var seen = Set<String>()
            unique = keys.filter { seen.insert($0).inserted }
        }
        guard let node = bus.index.subscribe(E.self, keys: unique, body: body, owner: owner, isOwned: isOwned, bus: bus)
        else { return .inert }
        return EventToken(node)
    }

    /// The nonisolated body for `callback`: on the dispatching thread, or on the queue.
    func body(_ callback: Callback<E>) -> Body<E> {
        queue.map { .queue($0, callback) } ?? .immediate(callback)
    }
}

// The owner is held weakly as `AnyObject`, and it is only ever an `Owner`, which is Sendable.
extension SubscriberMaker: @unchecked Sendable where Owner: Sendable {}

extension SubscriberMaker where Delivery: NonisolatedDelivery, Owner == Never {
    /// Registers `handler` and returns the subscription's token: keep it, or the subscription lasts
    /// as long as the bus.
    ///
    /// The handler runs on the dispatching thread, before `dispatch` returns, or on the
    /// ``atQueue(_:)`` queue. With no owner, the subscription lives until the token is disposed
    /// (dropping the token does not end it), a ``DisposeBag`` holding it is emptied or deallocated,
    /// or the bus is deallocated. The result is not discardable, so the compiler warns about a
    /// dropped token: write `_ = bus.on(…).next { … }` for a subscription meant to last as long as
    /// the bus, or bind it to an owner with ``freeWith(_:)``.
    ///
    /// ```swift
    /// let token = bus.on(LoginEvent.self).next { event in print(event.userID) }
    /// token.dispose()
    /// ```
    public func next(_ handler: @escaping @Sendable (E) -> Void) -> EventToken {
        register(body(.event(handler)))
    }
}

extension SubscriberMaker where Delivery: NonisolatedDelivery, Owner: AnyObject {
    /// Unavailable: an owner-bound handler receives its owner. Use `next { owner, event in … }`.
    ///
    /// A handler that captured `self` strongly would keep its owner alive, and the subscription
    /// with it, forever: the owner-passing form needs no capture, so it cannot leak. To ignore the
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
            "an owner-bound handler receives its owner, so that it cannot keep it alive: write 'next { owner, event in owner.… }' or 'next { _, event in … }' (see the README, 'Owners')"
    )
    @discardableResult
    public func next(_ handler: @escaping @Sendable (E) -> Void) -> EventToken {
        register(body(.event(handler)))
    }
}

extension SubscriberMaker where Delivery: NonisolatedDelivery, Owner: AnyObject & Sendable {
    /// Registers `handler`, which receives the owner (retained for the call) with each event, and
    /// returns the subscription's token.
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
    public func next(_ handler: @escaping @Sendable (Owner, E) -> Void) -> EventToken {
        // The bus only ever passes back the owner this subscription was made with.
        register(body(.ownerAndEvent { owner, event in handler(unsafeDowncast(owner, to: Owner.self), event) }))
    }
}

extension SubscriberMaker where Delivery == EventDelivery.MainActor, Owner == Never {
    /// Registers the `@MainActor` `handler` and returns the subscription's token: keep it, or the
    /// subscription lasts as long as the bus.
    ///
    /// Runs on the main actor: before `dispatch` returns when dispatched on the main thread,
    /// otherwise soon after, enqueued on the main queue in dispatch order. With no owner, the
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
    public func next(_ handler: @escaping @MainActor @Sendable (E) -> Void) -> EventToken {
        register(.mainActor(.event(handler)))
    }
}

extension SubscriberMaker where Delivery == EventDelivery.MainActor, Owner: AnyObject {
    /// Unavailable: an owner-bound handler receives its owner. Use `next { owner, event in … }`.
    ///
    /// A handler that captured `self` strongly would keep its owner alive, and the subscription
    /// with it, forever: the owner-passing form needs no capture, so it cannot leak. To ignore the
    /// owner, write `next { _, event in … }`. The owner-passing form needs a `Sendable` owner (the
    /// handler may run on another thread); an owner that is not `Sendable` keeps unowned
    /// subscriptions' tokens in a ``DisposeBag`` property instead, which ends them with it.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).onMainActor().next { owner, event in owner.render(event) }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner, so that it cannot keep it alive: write 'next { owner, event in owner.… }' or 'next { _, event in … }' (see the README, 'Owners')"
    )
    @discardableResult
    public func next(_ handler: @escaping @MainActor @Sendable (E) -> Void) -> EventToken {
        register(.mainActor(.event(handler)))
    }
}

extension SubscriberMaker where Delivery == EventDelivery.MainActor, Owner: AnyObject & Sendable {
    /// Registers the `@MainActor` `handler`, which receives the owner (retained for the call) with
    /// each event, and returns the subscription's token.
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
    public func next(_ handler: @escaping @MainActor @Sendable (Owner, E) -> Void) -> EventToken {
        // The bus only ever passes back the owner this subscription was made with.
        register(.mainActor(.ownerAndEvent { owner, event in handler(unsafeDowncast(owner, to: Owner.self), event) }))
    }
}
