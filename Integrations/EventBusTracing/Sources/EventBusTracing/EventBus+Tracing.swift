public import EventBus
public import Tracing

extension EventBus {
    /// Sets this bus's `contextPropagator` to a ``ServiceContextPropagator``: the dispatcher's
    /// `ServiceContext` reaches every handler that runs elsewhere (queue, main actor, stream,
    /// deferred dispatch), in a `process` span each if `processSpans`.
    ///
    /// Call it once, at start-up; it replaces any propagator set before. Handlers already enqueued
    /// keep the one they were captured with.
    ///
    /// ```swift
    /// let bus = EventBus()
    /// bus.installTracing()   // InstrumentationSystem.tracer's spans
    /// ```
    ///
    /// - Parameters:
    ///   - tracer: The tracer of the spans; `nil`: `InstrumentationSystem.tracer` at each span.
    ///   - processSpans: Whether each delivery that leaves the dispatching thread gets a span.
    public func installTracing(tracer: (any Tracer)? = nil, processSpans: Bool = true) {
        contextPropagator = ServiceContextPropagator(tracer: tracer, processSpans: processSpans)
    }

    /// Dispatches `event` in a `publish` span (kind `.producer`, OpenTelemetry's messaging
    /// attributes): synchronous handlers run inside it, and the deliveries it enqueues carry it, so
    /// their `process` spans are its children.
    ///
    /// Runs as ``EventBus/dispatch(_:)`` does (synchronous subscribers on this thread before it
    /// returns); the span ends when it returns. With no tracer bootstrapped and none given, the span
    /// is a no-op.
    ///
    /// ```swift
    /// bus.tracedDispatch(LoginEvent(userID: "42"))
    /// ```
    ///
    /// - Parameters:
    ///   - event: The event to dispatch.
    ///   - tracer: The tracer of the span; `nil`: the installed ``ServiceContextPropagator``'s, else
    ///     `InstrumentationSystem.tracer`.
    public func tracedDispatch<E: Event>(_ event: E, tracer: (any Tracer)? = nil) {
        let installed = (contextPropagator as? ServiceContextPropagator)?.tracer
        let chosen: any Tracer = tracer ?? installed ?? InstrumentationSystem.tracer
        publish(event, with: chosen)
    }

    /// ``tracedDispatch(_:tracer:)`` with its tracer's type known.
    private func publish<E: Event, T: Tracer>(_ event: E, with tracer: T) {
        let destination = MessagingDestination(E.self, key: event._routingKey)
        tracer.withSpan(destination.spanName(.publish), ofKind: .producer) { span in
            destination.describe(span, .publish)
            dispatch(event)
        }
    }
}
