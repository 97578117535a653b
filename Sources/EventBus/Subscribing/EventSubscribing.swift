/// Gives a class `subscribe(_:)`: subscriptions bound to the instance's lifetime, in one word.
///
/// Conform any class; every `NSObject` subclass already conforms when you import
/// `EventBusFoundation`.
///
/// ```swift
/// final class ProfileScreen: EventSubscribing {
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
    /// final class Inbox: EventSubscribing {
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
