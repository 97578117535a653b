/// An event that no subscriber received, as ``EventBus/deadEventHandler`` and the bus's tracers
/// (``TraceRecord/deadEvent(_:)``) receive it.
///
/// A dispatch is dead when it started and enqueued no delivery at all: nobody subscribes to its
/// type and key (nor to a supertype it is delivered as), or every subscriber it found had ended.
/// A dispatch stopped by a `handle` handler, a sticky dispatch, and a bridged notification (handed
/// to `NotificationCenter`) are never dead. Every dead event goes to the handler, if one is set,
/// and to the tracers, if any is added, each whether or not the other is: a metrics or logging
/// tracer sees every dead event without a handler. With neither, dead events cost nothing.
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
    /// The event type it was dispatched as (the type `dispatch(_:)` was called with).
    public let type: Any.Type

    /// The event type, as `String(reflecting:)` spells it (`MyApp.LoginEvent`), the same name as
    /// the other trace records' `typeName` (built when read).
    public var typeName: String { eventTypeName(type) }
}
