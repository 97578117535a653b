/// An event that no subscriber received, as ``EventBus/deadEventHandler`` receives it.
///
/// A dispatch is dead when it started and enqueued no delivery at all: nobody subscribes to its
/// type and key (nor to a supertype it is delivered as), or every subscriber it found had ended.
/// A dispatch stopped by a `handle` handler, a sticky dispatch, and a bridged notification (handed
/// to `NotificationCenter`) are never dead.
///
/// ```swift
/// let bus = EventBus()
/// bus.deadEventHandler = { dead in print("nobody handled \(dead.event)") }
/// bus.dispatch(LoginEvent(userID: "42"))   // prints "nobody handled LoginEvent(userID: "42")"
/// ```
public struct DeadEvent: Sendable {
    /// The event, as dispatched.
    public let event: any Event
    /// The key it was routed by (its ``Event/eventType``), `nil` for none.
    public let key: String?
}
