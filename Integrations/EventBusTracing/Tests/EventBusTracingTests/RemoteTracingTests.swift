import Dispatch
import EventBus
import EventBusRemote
import EventBusTracing
import InMemoryTracing
import Testing
import Tracing

/// Two instances over `EventBusRemote`'s in-memory transport, each with its own tracer (as two
/// processes would have): the publisher makes one `send` span, whose context the envelope carries;
/// the receiver makes one `process` span per hop, child of the `send` span and linked to it.
@Suite("EventBusTracing across processes")
struct RemoteTracingTests {
    struct Order: Event, Codable {
        let id: Int
    }

    static let order = String(reflecting: Order.self)

    /// One instance: a bus with `ServiceContextPropagator` on `tracer`, and a running bridge.
    final class Instance: Sendable {
        let bus = EventBus()
        let bridge: RemoteBridge
        let tracer = InMemoryTracer()
        private let task: Task<Void, any Error>

        init(on network: InMemoryNetwork, processSpans: Bool = true) async {
            bus.installTracing(tracer: tracer, processSpans: processSpans)
            bridge = RemoteBridge(bus: bus, transport: network.makeTransport())
            bridge.register(Order.self, as: "tracing.order.v1")
            let listening = Seen()
            let token = bus.on(BridgeStatus.self).next { status in
                if case .listening = status { listening.record("listening") }
            }
            let bridge = self.bridge
            task = Task { try await bridge.run() }
            #expect(await eventually { !listening.value.isEmpty }, "the bridge did not start listening")
            token.dispose()
        }

        deinit { task.cancel() }
    }

    typealias Seen = EventBusTracingTests.Seen

    @Test(
        "a remote publish makes one send span; a received event's synchronous subscribers run in one process span under it"
    )
    func sendThenProcess() async throws {
        let network = InMemoryNetwork()
        let publisher = await Instance(on: network)
        let receiver = await Instance(on: network)
        let seen = Seen()
        let token = receiver.bus.on(Order.self).next { _ in seen.record("sync") }
        let requestTrace = try await publisher.tracer.withSpan("request") { span in
            try await publisher.bridge.publish(Order(id: 1))
            return span.traceID
        }
        #expect(await eventually { seen.value.count == 1 })
        #expect(seen.value == ["sync": requestTrace], "the receiver's handler continues the publisher's trace")
        token.dispose()

        // The publisher: its request and one send span (its own envelope, back from the network, is
        // not dispatched again).
        #expect(await eventually { publisher.tracer.finishedSpans.count == 2 })
        try await Task.sleep(for: .milliseconds(50))
        let published = publisher.tracer.finishedSpans
        #expect(published.map(\.operationName).sorted() == ["request", "send \(Self.order)"])
        let request = try #require(published.first { $0.operationName == "request" })
        let send = try #require(published.first { $0.operationName == "send \(Self.order)" })
        #expect(send.kind == .producer)
        #expect(send.parentSpanID == request.spanID)
        #expect(send.string("messaging.operation.type") == "send")
        #expect(send.string("messaging.operation.name") == "send")
        #expect(send.string("messaging.destination.name") == Self.order)
        #expect(send.string("messaging.eventbus.delivery") == "remote \"tracing.order.v1\"")

        // The receiver: exactly one consumer span, child of the send span and linked to it.
        #expect(await eventually { receiver.tracer.finishedSpans.count == 1 })
        try await Task.sleep(for: .milliseconds(50))
        let received = receiver.tracer.finishedSpans
        #expect(received.count == 1, "one process span, not one per hop inside the receiving bridge")
        let process = try #require(received.first)
        #expect(process.operationName == "process \(Self.order)")
        #expect(process.kind == .consumer)
        #expect(process.traceID == requestTrace)
        #expect(process.parentSpanID == send.spanID, "the envelope's context is the send span")
        #expect(process.links.map { $0.context.inMemorySpanContext?.spanID } == [send.spanID])
        #expect(process.string("messaging.operation.type") == "process")
        #expect(process.string("messaging.eventbus.delivery") == "remote \"tracing.order.v1\"")
    }

    @Test("on the receiver, a queued subscriber's hop adds one process span of its own, under the received event's")
    func queuedSubscriberOnTheReceiver() async throws {
        let network = InMemoryNetwork()
        let publisher = await Instance(on: network)
        let receiver = await Instance(on: network)
        let seen = Seen()
        let queue = DispatchQueue(label: "tracing.billing")
        let token = receiver.bus.on(Order.self).atQueue(queue).next { _ in seen.record("queue") }
        let requestTrace = try await publisher.tracer.withSpan("request") { span in
            try await publisher.bridge.publish(Order(id: 2))
            return span.traceID
        }
        #expect(await eventually { seen.value.count == 1 })
        #expect(seen.value == ["queue": requestTrace])
        token.dispose()
        let send = try #require(
            await eventually { publisher.tracer.finishedSpans.count == 2 }
                ? publisher.tracer.finishedSpans.first { $0.kind == .producer && $0.operationName.hasPrefix("send") }
                : nil)

        #expect(await eventually { receiver.tracer.finishedSpans.count == 2 })
        try await Task.sleep(for: .milliseconds(50))
        let spans = receiver.tracer.finishedSpans
        #expect(spans.count == 2, "the received event's span and the queue hop's, not three")
        let remote = try #require(
            spans.first { $0.string("messaging.eventbus.delivery") == "remote \"tracing.order.v1\"" })
        let hop = try #require(spans.first { $0.string("messaging.eventbus.delivery") == "queue \"tracing.billing\"" })
        #expect(remote.parentSpanID == send.spanID)
        #expect(hop.parentSpanID == remote.spanID)
        #expect(spans.allSatisfy { $0.kind == .consumer && $0.traceID == requestTrace })
    }

    @Test("without process spans, no send span either, yet the trace still crosses; outside any trace, nothing is sent")
    func contextOnlyAndNoTrace() async throws {
        let network = InMemoryNetwork()
        let publisher = await Instance(on: network, processSpans: false)
        let receiver = await Instance(on: network, processSpans: false)
        let seen = Seen()
        let token = receiver.bus.on(Order.self).next { order in seen.record("order \(order.id)") }
        let requestTrace = try await publisher.tracer.withSpan("request") { span in
            try await publisher.bridge.publish(Order(id: 3))
            return span.traceID
        }
        try await publisher.bridge.publish(Order(id: 4))  // outside any trace
        #expect(await eventually { seen.value.count == 2 })
        #expect(seen.value == ["order 3": requestTrace, "order 4": "none"])
        token.dispose()
        try await Task.sleep(for: .milliseconds(50))
        #expect(publisher.tracer.finishedSpans.map(\.operationName) == ["request"])
        #expect(receiver.tracer.finishedSpans.isEmpty)
        #expect(network.sent.filter { $0.contains("\"c\"") }.count == 1, "only the traced envelope carries headers")
    }
}
