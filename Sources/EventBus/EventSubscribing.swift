/// Gives a class `subscribe(_:)`: subscriptions bound to the instance's lifetime, in one word.
///
/// Conform any class; every `NSObject` subclass already conforms where Foundation is available.
///
/// ```swift
/// final class ProfileScreen: EventSubscribing {
///     func viewDidLoad() {
///         subscribe(LoginEvent.self).next { owner, event in owner.show(event.userID) }
///     }
/// }
/// ```
public protocol EventSubscribing: AnyObject {}

extension EventSubscribing {
    /// Starts a subscription to `type` on `bus` (the shared bus by default), bound to `self`.
    ///
    /// Equivalent to `bus.on(type).freeWith(self)`: the subscription ends when `self` is
    /// deallocated, with no token to keep. Handlers run on the dispatching thread unless you chain
    /// ``OwnedSubscriberMaker/atQueue(_:)``.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).next { owner, event in owner.show(event.userID) }
    /// subscribe(ChatMessage.self, on: moduleBus).ofType("room-7").next { owner, m in owner.append(m) }
    /// ```
    public func subscribe<E: Event>(_ type: E.Type, on bus: EventBus = .shared) -> OwnedSubscriberMaker<E, Self> {
        bus.on(type).freeWith(self)
    }
}
