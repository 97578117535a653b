/// Carries a context — a trace, a request's baggage — from the code that dispatches an event to the
/// handlers that run later or elsewhere: on a queue, on the main actor, in a stream's consuming
/// task, after a main-actor chain's hop, or after ``EventBus/dispatchOnBusQueue(_:)``.
///
/// Set one with ``EventBus/contextPropagator`` (``EventNode/contextPropagator`` on a chain node).
/// When a delivery leaves the dispatching thread, the bus calls ``capture()`` there, at once (on the
/// dispatching thread, with no lock held), and keeps the value with the delivery; when the delivery
/// runs, the bus calls ``restore(_:for:_:)`` on the thread that runs it, and the handler runs inside
/// its `body`. A synchronous handler runs in the dispatching task itself: it already sees the
/// dispatcher's context, and no capture is made for it.
///
/// With no propagator (the default) nothing is captured, nothing is allocated, and a delivery that
/// leaves the thread pays one atomic load. With one, each such delivery pays a lock acquisition
/// (the propagator is read under the bus's lock), ``capture()`` and ``restore(_:for:_:)``.
///
/// Nothing changes on dispose: a delivery to a disposed subscription does not start, and its
/// captured value is released with it. `Integrations/EventBusTracing` binds this to
/// swift-distributed-tracing's `ServiceContext`.
///
/// ```swift
/// enum RequestID {
///     @TaskLocal static var current: String?
/// }
/// struct RequestIDPropagator: EventContextPropagator {
///     func capture() -> (any Sendable)? { RequestID.current }
///     func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {
///         RequestID.$current.withValue(context as? String, operation: body)
///     }
///     func restore(
///         _ context: any Sendable, for delivery: EventContextDelivery,
///         isolation: isolated (any Actor)?, _ body: () async -> Void
///     ) async {
///         await RequestID.$current.withValue(context as? String, operation: body)
///     }
/// }
/// let bus = EventBus()
/// bus.contextPropagator = TaskLocalContextPropagator(RequestID.$current)
/// ```
public protocol EventContextPropagator: Sendable {
    /// The context of the calling task or thread, to be restored around the delivery; `nil` if
    /// there is none to carry (the delivery then runs as if no propagator were set).
    ///
    /// Called on the dispatching thread, with no lock held, once for each delivery that leaves it.
    /// It must be fast and must not call into the bus.
    ///
    /// ```swift
    /// func capture() -> (any Sendable)? { RequestID.current }
    /// ```
    func capture() -> (any Sendable)?

    /// Runs `body`, which calls a handler, with `context` (what ``capture()`` returned for this
    /// delivery) made current again.
    ///
    /// Called on the thread that runs the delivery (the subscription's queue, the main queue, the
    /// bus queue), with no lock held. Call `body` exactly once; if it is not called, the bus calls it
    /// afterwards, with no context.
    ///
    /// ```swift
    /// func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {
    ///     RequestID.$current.withValue(context as? String, operation: body)
    /// }
    /// ```
    func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void)

    /// ``restore(_:for:_:)`` around an asynchronous body: the loop body of
    /// ``EventStream/consume(isolation:_:)``, run in the consuming task, on `isolation`.
    ///
    /// ```swift
    /// func restore(
    ///     _ context: any Sendable, for delivery: EventContextDelivery,
    ///     isolation: isolated (any Actor)?, _ body: () async -> Void
    /// ) async {
    ///     await RequestID.$current.withValue(context as? String, operation: body)
    /// }
    /// ```
    func restore(
        _ context: any Sendable, for delivery: EventContextDelivery, isolation: isolated (any Actor)?,
        _ body: () async -> Void
    ) async

    /// `context` as text headers, to cross a process boundary: what a remote bridge
    /// (`EventBusRemote`) puts in the envelope of an event published with a context (W3C
    /// `traceparent`, `tracestate`, `baggage` for a tracing propagator). Empty (the default): the
    /// context stays in this process.
    ///
    /// ```swift
    /// func headers(of context: any Sendable) -> [String: String] {
    ///     (context as? String).map { ["request-id": $0] } ?? [:]
    /// }
    /// ```
    func headers(of context: any Sendable) -> [String: String]

    /// The context that `headers` (what ``headers(of:)`` made in another process, untrusted) carry,
    /// to be restored around the dispatch of the event they came with; `nil` (the default) for none.
    ///
    /// ```swift
    /// func context(fromHeaders headers: [String: String]) -> (any Sendable)? { headers["request-id"] }
    /// ```
    func context(fromHeaders headers: [String: String]) -> (any Sendable)?
}

extension EventContextPropagator {
    /// No headers: the context does not leave the process.
    ///
    /// ```swift
    /// let headers = TaskLocalContextPropagator(RequestID.$current).headers(of: "req-7")   // [:]
    /// ```
    public func headers(of context: any Sendable) -> [String: String] { [:] }

    /// No context from headers.
    ///
    /// ```swift
    /// let context = TaskLocalContextPropagator(RequestID.$current).context(fromHeaders: ["traceparent": "…"])   // nil
    /// ```
    public func context(fromHeaders headers: [String: String]) -> (any Sendable)? { nil }
}
