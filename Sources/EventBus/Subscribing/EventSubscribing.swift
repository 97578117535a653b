/// Gives a class `subscribe(_:)`: subscriptions bound to the instance's lifetime, in one word.
///
/// Conform any class; every `NSObject` subclass already conforms when you import
/// `EventBusFoundation`.
///
/// ```swift
/// final class ProfileScreen: EventSubscribing, Sendable {
///     func viewDidLoad() {
///         subscribe(LoginEvent.self).next { owner, event in owner.show(event.userID) }
///     }
///     func show(_ userID: String) { print(userID) }
/// }
/// ```
public protocol EventSubscribing: AnyObject {}

extension EventSubscribing {
    /// Starts a subscription to `type` on `bus` (the shared bus by default), bound to `self`.
    ///
    /// Equivalent to `bus.on(type).freeWith(self)`: the subscription ends when `self` is
    /// deallocated, with no token to keep. Handlers run on the dispatching thread unless you chain
    /// ``SubscriberMaker/atQueue(_:)`` or ``SubscriberMaker/onMainActor()``.
    ///
    /// ```swift
    /// final class Inbox: EventSubscribing, Sendable {
    ///     func start(moduleBus: EventBus) {
    ///         subscribe(LoginEvent.self).next { owner, event in owner.show(event.userID) }
    ///         subscribe(ChatMessage.self, on: moduleBus).ofType("room-7").next { owner, m in owner.show(m.text) }
    ///     }
    ///     func show(_ text: String) { print(text) }
    /// }
    /// ```
    public func subscribe<E: Event>(
        _ type: E.Type, on bus: EventBus = .shared
    ) -> SubscriberMaker<E, Self, EventDelivery.Synchronous> {
        bus.on(type).freeWith(self)
    }
}

extension EventSubscribing where Self: Actor {
    /// Starts a subscription to `type` on `bus` (the shared bus by default), bound to this actor and
    /// delivered on it: `bus.on(type).isolated(to: self)`.
    ///
    /// An actor's own subscriptions run isolated to it, so the handler given to `next` reaches its
    /// state with no `await`, in dispatch order. This is how the bus takes the caller's isolation:
    /// inside an actor, the caller's isolation is `self`, typed (`#isolation` would give an
    /// `any Actor` whose state a handler could not reach), and it is chosen by conforming, never by
    /// where `bus.on(_:)` happens to be written. Chain ``SubscriberMaker/atQueue(_:)`` for a
    /// nonisolated handler instead.
    ///
    /// ```swift
    /// actor Session: EventSubscribing {
    ///     var user: String?
    ///     func start() {
    ///         subscribe(LoginEvent.self).next { session, event in session.user = event.userID }
    ///     }
    /// }
    /// ```
    public func subscribe<E: Event>(
        _ type: E.Type, on bus: EventBus = .shared
    ) -> SubscriberMaker<E, Self, EventDelivery.Isolated> {
        bus.on(type).isolated(to: self)
    }
}
