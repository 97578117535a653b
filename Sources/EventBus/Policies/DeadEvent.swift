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
///
/// A tracer alone sees them too, on the dispatching thread after the bus let go of its lock, until
/// its token is removed:
///
/// ```swift
/// let token = bus.addTracer { record in
///     if case .deadEvent(let dead) = record { print("dead:", dead.typeName) }   // "dead: MyApp.LoginEvent"
/// }
/// ```
public struct DeadEvent: Sendable {
    /// The event, as dispatched.
    public let event: any Event
    /// The key it was routed by (its ``Event/eventType``), `nil` for none.
    public let key: String?
    /// The event type it was dispatched as (the type `dispatch(_:)` was called with), as
    /// ``TraceRecord/Dispatched/type`` has it.
    ///
    /// ```swift
    /// bus.deadEventHandler = { dead in print(dead.type == LoginEvent.self) }   // true for a LoginEvent
    /// ```
    public let type: Any.Type

    /// The event type module-qualified, as `String(reflecting:)` spells it (`MyApp.LoginEvent`):
    /// the same name as the other trace records' `typeName`, and the one the integrations use as a
    /// metric's `event_type` and a log line's `event.type` (built when read).
    ///
    /// ```swift
    /// bus.deadEventHandler = { dead in print("nobody handled", dead.typeName) }   // "MyApp.LoginEvent"
    /// ```
    public var typeName: String { eventTypeName(type) }
}
