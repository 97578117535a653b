public import EventBus
public import Tracing

/// Carries swift-distributed-tracing's `ServiceContext` (the current trace, its baggage) from where
/// an event is dispatched to every handler that runs elsewhere, and optionally wraps each such
/// delivery in a `process` span (OpenTelemetry's messaging conventions).
///
/// Across processes, `EventBusRemote` makes each envelope inside ``send(_:for:_:)``: a `send` span
/// (kind `.producer`) whose context the envelope carries as the headers the tracer injects (W3C
/// `traceparent`, and `tracestate` when set, with swift-otel 1.6.0, which sends no baggage). The
/// receiving bridge dispatches the event with the context extracted from them
/// (``context(fromHeaders:)``), in one `process` span, child of the `send` span and linked to it.
///
/// Install it with ``EventBus/installTracing(tracer:processSpans:)``, or set it as any
/// `EventContextPropagator` (on a chain node: `node.contextPropagator`). What is propagated where:
///
/// - Synchronous handlers run in the dispatching task: they see its `ServiceContext` with or
///   without this propagator, inside the dispatch's `publish` span if it has one
///   (``EventBus/tracedDispatch(_:tracer:)``). No span is made per synchronous handler.
/// - Queued handlers, main-actor handlers enqueued from another thread, a stream consumed with
///   `EventStream.consume(isolation:_:)`, a main-actor chain's post made off the main queue, and the
///   dispatch `dispatchOnBusQueue` or `dispatchOnMain` makes later: run with the dispatcher's
///   context restored; with `processSpans`, inside a `process` span (kind `.consumer`) that is a child
///   of the dispatcher's current span and links to it.
///
/// `capture()` reads the task-local `ServiceContext.current`, on the dispatching thread; `restore`
/// binds it around the delivery, on the thread that runs it. A dispatch with no current context
/// carries nothing, and its deliveries run without a span, and without a context: a stream's
/// loop body too, whatever trace its consuming task is in (``withoutContext(for:isolation:_:)``).
///
/// ```swift
/// let bus = EventBus()
/// bus.contextPropagator = ServiceContextPropagator(processSpans: true)
/// ```
public struct ServiceContextPropagator: EventContextPropagator {
    /// The tracer of the `process` spans; `nil`: `InstrumentationSystem.tracer`, read at each
    /// delivery (the one bootstrapped, or a no-op tracer).
    public let tracer: (any Tracer)?
    /// Whether each delivery that leaves the dispatching thread runs in a `process` span, and each
    /// remote envelope is made in a `send` span (``send(_:for:_:)``).
    public let processSpans: Bool

    /// A propagator whose `process` spans (if `processSpans`) are made by `tracer`
    /// (`InstrumentationSystem.tracer` when `nil`).
    ///
    /// ```swift
    /// let propagator = ServiceContextPropagator(tracer: nil, processSpans: false)   // context only
    /// ```
    public init(tracer: (any Tracer)? = nil, processSpans: Bool = true) {
        self.tracer = tracer
        self.processSpans = processSpans
    }

    /// `ServiceContext.current`, on the dispatching thread; `nil` if there is none.
    ///
    /// ```swift
    /// let captured = ServiceContextPropagator().capture()   // nil outside any span
    /// ```
    public func capture() -> (any Sendable)? {
        ServiceContext.current
    }

    /// Runs `body` with `context` bound as `ServiceContext.current`, in a `process` span when
    /// `processSpans` is set; on the thread that runs the delivery.
    ///
    /// ```swift
    /// let delivery = EventContextDelivery(eventType: Int.self, key: nil, hop: .mainActor, subscriptionID: 1)
    /// ServiceContextPropagator().restore(ServiceContext.topLevel, for: delivery) { print("handler") }
    /// ```
    public func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {
        guard let context = context as? ServiceContext else { return body() }
        guard processSpans else { return ServiceContext.withValue(context, operation: body) }
        let tracer: any Tracer = tracer ?? InstrumentationSystem.tracer
        Self.process(tracer, context, delivery, body)
    }

    /// ``restore(_:for:_:)`` around a stream's loop body, on `isolation`.
    ///
    /// ```swift
    /// let delivery = EventContextDelivery(eventType: Int.self, key: nil, hop: .stream, subscriptionID: 1)
    /// await ServiceContextPropagator().restore(ServiceContext.topLevel, for: delivery, isolation: nil) {}
    /// ```
    public func restore(
        _ context: any Sendable, for delivery: EventContextDelivery, isolation: isolated (any Actor)?,
        _ body: () async -> Void
    ) async {
        guard let context = context as? ServiceContext else { return await body() }
        guard processSpans else {
            return await ServiceContext.withValue(context, isolation: isolation, operation: body)
        }
        let tracer: any Tracer = tracer ?? InstrumentationSystem.tracer
        await Self.process(tracer, context, delivery, isolation: isolation, body)
    }

    /// Runs a stream's loop body with no `ServiceContext` current, and no span, on `isolation`:
    /// the event was dispatched outside any trace, so its handler does not join the consuming
    /// task's own (`EventStream.consume(isolation:_:)`, for an event whose dispatch carried none).
    ///
    /// ```swift
    /// let delivery = EventContextDelivery(eventType: Int.self, key: nil, hop: .stream, subscriptionID: 1)
    /// await ServiceContextPropagator().withoutContext(for: delivery, isolation: nil) {
    ///     print(ServiceContext.current == nil)   // true
    /// }
    /// ```
    public func withoutContext(
        for delivery: EventContextDelivery, isolation: isolated (any Actor)?, _ body: () async -> Void
    ) async {
        await ServiceContext.withValue(nil, isolation: isolation, operation: body)
    }

    /// `context` as the headers the tracer (an `Instrument`) injects: for swift-otel's W3C
    /// propagator, `traceparent`, and `tracestate` when the span has one. What a `send` span's
    /// context becomes in an `EventBusRemote` envelope, so that a handler on another instance
    /// continues the trace.
    ///
    /// ```swift
    /// let headers = ServiceContextPropagator().headers(of: ServiceContext.topLevel)   // [:]
    /// ```
    public func headers(of context: any Sendable) -> [String: String] {
        guard let context = context as? ServiceContext else { return [:] }
        var headers: [String: String] = [:]
        instrument.inject(context, into: &headers, using: HeaderInjector())
        return headers
    }

    /// Runs `body`, which makes a remote envelope, in a `send` span (kind `.producer`, child of
    /// `context`, OpenTelemetry's messaging attributes), with the headers of the span's context:
    /// the envelope's `traceparent` is the `send` span, so the receiving instance's `process` span
    /// is its child. The span ends when `body` returns (the transport sends the envelope later). With
    /// `processSpans` off, no span: the headers of `context` itself.
    ///
    /// ```swift
    /// let delivery = EventContextDelivery(eventType: Int.self, key: nil, hop: .remote(wireName: "n"), subscriptionID: nil)
    /// let headers = ServiceContextPropagator().send(ServiceContext.topLevel, for: delivery) { $0 }
    /// ```
    public func send<R>(
        _ context: any Sendable, for delivery: EventContextDelivery, _ body: ([String: String]) throws -> R
    ) rethrows -> R {
        guard let context = context as? ServiceContext, processSpans else { return try body(headers(of: context)) }
        let tracer: any Tracer = tracer ?? InstrumentationSystem.tracer
        return try Self.send(tracer, context, delivery, body)
    }

    /// The `ServiceContext` the tracer extracts from `headers` (untrusted: the instrument parses
    /// them), `nil` if it found none: an envelope's context, restored around the receiving
    /// instance's dispatch of its event (in a `process` span when `processSpans`).
    ///
    /// ```swift
    /// let context = ServiceContextPropagator().context(fromHeaders: ["traceparent": "…"])
    /// ```
    public func context(fromHeaders headers: [String: String]) -> (any Sendable)? {
        var context = ServiceContext.topLevel
        instrument.extract(headers, into: &context, using: HeaderExtractor())
        return context.isEmpty ? nil : context
    }

    /// What injects and extracts headers: the tracer, else the bootstrapped instrument.
    private var instrument: any Instrument {
        tracer ?? InstrumentationSystem.instrument
    }

    /// ``send(_:for:_:)``'s span, with its tracer's type known.
    private static func send<T: Tracer, R>(
        _ tracer: T, _ context: ServiceContext, _ delivery: EventContextDelivery,
        _ body: ([String: String]) throws -> R
    ) rethrows -> R {
        let destination = MessagingDestination(delivery.eventType, key: delivery.key)
        let span = tracer.startSpan(destination.spanName(.send), context: context, ofKind: .producer)
        defer { span.end() }
        destination.describe(span, .send, delivery)
        var headers: [String: String] = [:]
        tracer.inject(span.context, into: &headers, using: HeaderInjector())
        do {
            return try body(headers)
        } catch {
            span.recordError(error)
            throw error
        }
    }

    /// Runs `body` in a `process` span of `tracer`, child of `context` and linked to it.
    private static func process<T: Tracer>(
        _ tracer: T, _ context: ServiceContext, _ delivery: EventContextDelivery, _ body: () -> Void
    ) {
        let destination = MessagingDestination(delivery.eventType, key: delivery.key)
        tracer.withSpan(destination.spanName(.process), context: context, ofKind: .consumer) { span in
            destination.describe(span, .process, delivery)
            span.addLink(SpanLink(context: context, attributes: [:]))
            body()
        }
    }

    /// ``process(_:_:_:_:)`` for an asynchronous body, on `isolation`.
    private static func process<T: Tracer>(
        _ tracer: T, _ context: ServiceContext, _ delivery: EventContextDelivery, isolation: isolated (any Actor)?,
        _ body: () async -> Void
    ) async {
        let destination = MessagingDestination(delivery.eventType, key: delivery.key)
        await tracer.withSpan(destination.spanName(.process), context: context, ofKind: .consumer, isolation: isolation)
        {
            span in
            destination.describe(span, .process, delivery)
            span.addLink(SpanLink(context: context, attributes: [:]))
            await body()
        }
    }
}

/// Writes an instrument's headers into a dictionary.
private struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) {
        carrier[key] = value
    }
}

/// Reads an instrument's headers from a dictionary.
private struct HeaderExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? {
        carrier[key]
    }
}
