/// Carries a context — a trace, a request's baggage — from the code that dispatches an event to the
/// handlers that run later or elsewhere: on a queue, on the main actor, in a stream's consuming
/// task, after a main-actor chain's hop, or after ``EventBus/dispatchOnBusQueue(_:)``.
///
/// Set one with ``EventConfigurable/contextPropagator`` (``EventConfigurable/contextPropagator`` on a chain node).
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
/// A propagator calls each body it is given exactly once. The bus holds it to that: if `restore`
/// returns without calling its body, the bus calls it afterwards, without the context; if it calls
/// it again, the second call returns at once, and the handler does not run twice. Either is a bug
/// in the propagator, which debug builds report on standard error (`EventBus: the context
/// propagator … called its body twice …`).
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
    /// there is none to carry: the delivery then runs with no context, as if no propagator were set
    /// (a stream's loop body inside ``withoutContext(for:isolation:_:)``).
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
    /// bus queue, an actor's executor), with no lock held. Call `body` exactly once: if it is not
    /// called, the bus calls it afterwards, with no context; a second call returns at once without
    /// running the handler again. Debug builds report either on standard error.
    ///
    /// ```swift
    /// func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {
    ///     RequestID.$current.withValue(context as? String, operation: body)
    /// }
    /// ```
    func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void)

    /// ``restore(_:for:_:)`` around an asynchronous body: the loop body of
    /// ``EventStream/consume(isolation:_:)``, run in the consuming task, on `isolation`. The same
    /// rule holds: call `body` exactly once.
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

    /// Runs `body` with no context current: the state of code that has none, as the dispatcher of
    /// this delivery had none (``capture()`` returned `nil`, or no propagator was set when it
    /// dispatched).
    ///
    /// The bus calls it in ``EventStream/consume(isolation:_:)``, in the consuming task, on
    /// `isolation`, where that task may have a context of its own: the loop body of an event
    /// dispatched with no context then runs with none, as a queued handler does, not with the
    /// consumer's. Call `body` exactly once. The default runs `body` as it is (the consuming task's
    /// own context stays current): implement it when a task can hold a context of yours, as
    /// ``TaskLocalContextPropagator`` does (it binds `nil`, or a non-optional task-local's default).
    ///
    /// ```swift
    /// func withoutContext(
    ///     for delivery: EventContextDelivery, isolation: isolated (any Actor)?, _ body: () async -> Void
    /// ) async {
    ///     await RequestID.$current.withValue(nil, operation: body)
    /// }
    /// ```
    func withoutContext(
        for delivery: EventContextDelivery, isolation: isolated (any Actor)?, _ body: () async -> Void
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

    /// Runs `body`, which makes the envelope of an event leaving this process, with the headers
    /// that envelope carries: ``headers(of:)`` of `context` (what ``capture()`` returned where the
    /// event was published), or of a context the propagator opens for the send. A tracing
    /// propagator opens a `send` span there (kind producer, child of `context`), whose context the
    /// headers carry, so the receiving instance's `process` span is its child; the span ends when
    /// `body` returns. The default calls `body` with ``headers(of:)``, opening nothing.
    ///
    /// A remote bridge (`EventBusRemote`) calls it on the publishing thread, with no lock held,
    /// once per envelope made with a context; `delivery`'s hop is
    /// ``EventContextDelivery/Hop/remote(wireName:)``, its subscription `nil`. Call `body` exactly
    /// once.
    ///
    /// ```swift
    /// func send<R>(
    ///     _ context: any Sendable, for delivery: EventContextDelivery, _ body: ([String: String]) throws -> R
    /// ) rethrows -> R {
    ///     try body(headers(of: context))
    /// }
    /// ```
    func send<R>(
        _ context: any Sendable, for delivery: EventContextDelivery, _ body: ([String: String]) throws -> R
    ) rethrows -> R

    /// The context that `headers` (what ``headers(of:)`` made in another process, untrusted) carry,
    /// to be restored around the dispatch of the event they came with; `nil` (the default) for none.
    ///
    /// ```swift
    /// func context(fromHeaders headers: [String: String]) -> (any Sendable)? { headers["request-id"] }
    /// ```
    func context(fromHeaders headers: [String: String]) -> (any Sendable)?
}

extension EventContextPropagator {
    /// Runs `body` as it is: the consuming task's own context, if it has one, stays current.
    ///
    /// ```swift
    /// await propagator.withoutContext(for: delivery, isolation: nil) { print("no context of ours") }
    /// ```
    public func withoutContext(
        for delivery: EventContextDelivery, isolation: isolated (any Actor)?, _ body: () async -> Void
    ) async {
        await body()
    }

    /// No headers: the context does not leave the process.
    ///
    /// ```swift
    /// let headers = TaskLocalContextPropagator(RequestID.$current).headers(of: "req-7")   // [:]
    /// ```
    public func headers(of context: any Sendable) -> [String: String] { [:] }

    /// Calls `body` with ``headers(of:)`` of `context`: the send opens nothing of its own.
    ///
    /// ```swift
    /// let delivery = EventContextDelivery(eventType: LoginEvent.self, key: nil, hop: .remote(wireName: "login"), subscriptionID: nil)
    /// TaskLocalContextPropagator(RequestID.$current).send("req-7", for: delivery) { headers in print(headers) }   // [:]
    /// ```
    public func send<R>(
        _ context: any Sendable, for delivery: EventContextDelivery, _ body: ([String: String]) throws -> R
    ) rethrows -> R {
        try body(headers(of: context))
    }

    /// No context from headers.
    ///
    /// ```swift
    /// let context = TaskLocalContextPropagator(RequestID.$current).context(fromHeaders: ["traceparent": "…"])   // nil
    /// ```
    public func context(fromHeaders headers: [String: String]) -> (any Sendable)? { nil }
}
