import Dispatch
import EventBus
import EventBusTracing
import InMemoryTracing
import Testing
import Tracing

/// `ServiceContextPropagator` with an `InMemoryTracer`: every hop sees the dispatcher's trace, and
/// the spans nest as the package documents (request → publish → process).
@Suite("EventBusTracing")
struct EventBusTracingTests {
    struct Ping: Event {
        var key: String?
        var eventType: String? { key }
    }

    /// The event type's name as spans spell it: module-qualified, as metrics and logs do.
    static let ping = String(reflecting: Ping.self)

    /// What handlers saw: the trace id of their current `ServiceContext`, by hop.
    final class Seen: @unchecked Sendable {
        // @unchecked Sendable: `entries` is only touched on `lock`, a serial queue.
        private var entries: [String: String] = [:]
        private let lock = DispatchQueue(label: "tracing.seen")

        func record(_ hop: String) {
            let traceID = ServiceContext.current?.inMemorySpanContext?.traceID ?? "none"
            lock.sync { entries[hop] = traceID }
        }

        var value: [String: String] { lock.sync { entries } }
    }

    @Test(
        "a queued, a main-actor and a stream handler see the dispatcher's trace, in process spans under its publish span"
    )
    func everyHopContinuesTheTrace() async throws {
        let tracer = InMemoryTracer()
        let bus = EventBus()
        bus.installTracing(tracer: tracer)
        let seen = Seen()
        let queue = DispatchQueue(label: "tracing.work")
        let tokens = [
            bus.on(Ping.self).next { _ in seen.record("sync") },
            bus.on(Ping.self).atQueue(queue).next { _ in seen.record("queue") },
            bus.on(Ping.self).onMainActor().next { _ in seen.record("main") },
        ]
        let stream = Task { [events = bus.events(of: Ping.self)] in
            await events.consume { _ in
                seen.record("stream")
                withUnsafeCurrentTask { $0?.cancel() }
            }
        }
        #expect(await eventually { bus.subscriptionCount == 4 })
        let requestTrace = tracer.withSpan("request") { span in
            bus.tracedDispatch(Ping())
            return span.traceID
        }
        #expect(await eventually { seen.value.count == 4 })
        #expect(
            seen.value == ["sync": requestTrace, "queue": requestTrace, "main": requestTrace, "stream": requestTrace])
        _ = await stream.value
        for token in tokens { token.dispose() }

        #expect(await eventually { tracer.finishedSpans.count == 5 })
        let spans = tracer.finishedSpans
        let request = try #require(spans.first { $0.operationName == "request" })
        let publish = try #require(spans.first { $0.operationName == "publish \(Self.ping)" })
        let processes = spans.filter { $0.operationName == "process \(Self.ping)" }
        #expect(publish.parentSpanID == request.spanID)
        #expect(publish.kind == .producer)
        #expect(publish.string("messaging.system") == "eventbus")
        #expect(publish.string("messaging.operation.type") == "send")
        #expect(publish.string("messaging.destination.name") == Self.ping)
        #expect(processes.count == 3)
        for process in processes {
            #expect(process.traceID == requestTrace)
            #expect(process.parentSpanID == publish.spanID, "a process span is a child of the publish span")
            #expect(process.kind == .consumer)
            #expect(process.links.first?.context.inMemorySpanContext?.spanID == publish.spanID, "and links to it")
            #expect(process.string("messaging.operation.type") == "process")
        }
        let hops = Set(processes.compactMap { $0.string("messaging.eventbus.delivery") })
        #expect(hops == ["queue \"tracing.work\"", "main actor", "stream"])
    }

    @Test("a main-actor chain's post from a background thread carries the trace through two nodes")
    func chainHops() async throws {
        let tracer = InMemoryTracer()
        let list = MainActorEventNode(name: "List")
        let cell = MainActorEventNode(name: "Cell")
        #expect(await MainActor.run { cell.mount(on: list) })
        cell.contextPropagator = ServiceContextPropagator(tracer: tracer)
        let seen = Seen()
        let tokens = await MainActor.run {
            [
                cell.on(Ping.self).next { _ in seen.record("cell") },
                list.on(Ping.self).next { _ in seen.record("list") },
            ]
        }
        let requestTrace = tracer.withSpan("request") { span in
            cell.post(Ping())  // not on the main queue: enqueued there
            return span.traceID
        }
        #expect(await eventually { seen.value.count == 2 })
        #expect(seen.value == ["cell": requestTrace, "list": requestTrace])
        for token in tokens { token.dispose() }
        let hop = try #require(tracer.finishedSpans.first { $0.operationName == "process \(Self.ping)" })
        #expect(hop.string("messaging.eventbus.delivery") == "chain post at \"Cell\"")
    }

    @Test("without process spans the context still travels, and only the publish span is made; keys go in the template")
    func contextOnly() async throws {
        let tracer = InMemoryTracer()
        let bus = EventBus()
        bus.installTracing(tracer: tracer, processSpans: false)
        let seen = Seen()
        let queue = DispatchQueue(label: "tracing.quiet")
        let token = bus.on(Ping.self).atQueue(queue).next { _ in seen.record("queue") }
        let requestTrace = tracer.withSpan("request") { span in
            bus.tracedDispatch(Ping(key: "room-7"))
            return span.traceID
        }
        #expect(await eventually { seen.value.count == 1 })
        #expect(seen.value == ["queue": requestTrace])
        token.dispose()
        let names = tracer.finishedSpans.map(\.operationName)
        #expect(names.sorted() == ["publish \(Self.ping)/{key}", "request"])
        let publish = try #require(tracer.finishedSpans.first { $0.operationName == "publish \(Self.ping)/{key}" })
        #expect(publish.string("messaging.destination.name") == "\(Self.ping)/room-7")
        #expect(publish.string("messaging.destination.template") == "\(Self.ping)/{key}")
    }

    @Test("a context crosses a process boundary as the tracer's headers, and comes back as the same trace")
    func headersRoundTrip() throws {
        let tracer = InMemoryTracer()
        let propagator = ServiceContextPropagator(tracer: tracer)
        let (headers, request) = tracer.withSpan("request") { span in
            (propagator.headers(of: try! #require(propagator.capture())), span.context.inMemorySpanContext)
        }
        #expect(headers[InMemoryTracer.traceIDKey] == request?.traceID)
        #expect(headers[InMemoryTracer.spanIDKey] == request?.spanID)
        let received = try #require(propagator.context(fromHeaders: headers) as? ServiceContext)
        #expect(received.inMemorySpanContext?.traceID == request?.traceID)
        #expect(propagator.context(fromHeaders: ["traceparent": "not one of the tracer's"]) == nil)
        #expect(propagator.headers(of: "not a ServiceContext").isEmpty)

        // The receiving bridge restores it around its dispatch on the bus queue: one `process` span
        // under the publisher's.
        let delivery = EventContextDelivery(
            eventType: Ping.self, key: nil, hop: .remote(wireName: "ping.v1"), subscriptionID: nil)
        var seenTrace: String?
        propagator.restore(received, for: delivery) { seenTrace = ServiceContext.current?.inMemorySpanContext?.traceID }
        #expect(seenTrace == request?.traceID)
        #expect(tracer.finishedSpans.filter { $0.kind == .consumer }.count == 1)
        let process = try #require(tracer.finishedSpans.first { $0.operationName == "process \(Self.ping)" })
        #expect(process.parentSpanID == request?.spanID)
        #expect(process.string("messaging.eventbus.delivery") == "remote \"ping.v1\"")
    }

    @Test("a dispatch made outside any trace carries nothing and makes no span")
    func noTraceNoSpan() async {
        let tracer = InMemoryTracer()
        let bus = EventBus()
        bus.installTracing(tracer: tracer)
        let seen = Seen()
        let queue = DispatchQueue(label: "tracing.none")
        let token = bus.on(Ping.self).atQueue(queue).next { _ in seen.record("queue") }
        bus.dispatch(Ping())
        #expect(await eventually { seen.value.count == 1 })
        #expect(seen.value == ["queue": "none"])
        #expect(tracer.finishedSpans.isEmpty)
        token.dispose()
    }

    @Test("a stream consumed inside a trace runs an event dispatched outside any trace with none, not the consumer's")
    func streamConsumerTraceDoesNotLeak() async {
        let tracer = InMemoryTracer()
        let bus = EventBus()
        bus.installTracing(tracer: tracer, processSpans: false)
        let seen = Seen()
        let (consumerTrace, consumed) = tracer.withSpan("consumer") { span in
            // Started inside the span: the consuming task inherits its context.
            let task = Task { [events = bus.events(of: Ping.self)] in
                await events.consume { event in
                    seen.record(event.key ?? "")
                    if seen.value.count == 2 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }
            return (span.traceID, task)
        }
        let requestTrace = tracer.withSpan("request") { span in
            bus.dispatch(Ping(key: "traced"))
            return span.traceID
        }
        bus.dispatch(Ping(key: "untraced"))
        _ = await consumed.value
        #expect(requestTrace != consumerTrace)
        #expect(seen.value == ["traced": requestTrace, "untraced": "none"])
    }
}

/// Polls `condition` every millisecond, for 10 s at most; returns whether it became true.
func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<10_000 {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
}

extension FinishedInMemorySpan {
    /// The string attribute `name`, `nil` if it is missing or not a string.
    func string(_ name: String) -> String? {
        guard case .string(let value)? = attributes[name]?.toSpanAttribute() else { return nil }
        return value
    }
}
