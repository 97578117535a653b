import EventBus
import EventBusRemote
import Foundation
import Testing

/// The publisher's context across processes: an envelope carries the headers of the publishing
/// bus's context propagator (a W3C `traceparent` here), and the receiving bridge dispatches the
/// event with that context restored, so the other instance's handlers continue the trace.
@Suite("Context across bridges")
struct ContextTests {
    /// A W3C `traceparent`, as a tracing library keeps it: only a well-formed version-00 one
    /// parses (received headers are untrusted).
    struct Traceparent: LosslessStringConvertible, Sendable, Equatable {
        let description: String

        init?(_ description: String) {
            guard description.utf8.count == 55, description.hasPrefix("00-") else { return nil }
            self.description = description
        }
    }

    /// The trace: a task-local, carried as a `traceparent` header across processes.
    enum Trace {
        @TaskLocal static var parent: Traceparent?
        static let propagator = TaskLocalContextPropagator($parent, header: "traceparent")
    }

    static let traceparent = Traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")!

    /// Records the `Trace.parent` each handler of `Ping` on `bus` saw, synchronous and queued.
    final class SeenTraces: Sendable {
        private let tokens: [EventToken]
        private let sink = EventBus()

        struct Seen: Event, Equatable {
            let handler: String
            let n: Int
            let trace: String?
        }

        let recorded: Recorded<Seen>

        init(on bus: EventBus) {
            let sink = self.sink
            recorded = Recorded(Seen.self, on: sink)
            tokens = [
                bus.on(Ping.self).next { ping in
                    sink.dispatch(Seen(handler: "sync", n: ping.n, trace: Trace.parent?.description))
                },
                bus.on(Ping.self).atQueue(DispatchQueue(label: "remote.context")).next { ping in
                    sink.dispatch(Seen(handler: "queue", n: ping.n, trace: Trace.parent?.description))
                },
            ]
        }

        deinit { for token in tokens { token.dispose() } }
    }

    @Test("a handler on another instance runs with the publisher's traceparent; a publish outside a trace carries none")
    func traceparentCrossesTheBridge() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network, key: key(7))
        let b = try await Node("b", on: network, key: key(7))
        a.bus.contextPropagator = Trace.propagator
        b.bus.contextPropagator = Trace.propagator
        let traces = SeenTraces(on: b.bus)
        try await Trace.$parent.withValue(Self.traceparent) { try await a.publish(1) }
        try await a.publish(2)
        #expect(await traces.recorded.wait { $0.count == 4 })
        let seen = Set(traces.recorded.events.map { "\($0.handler) \($0.n) \($0.trace ?? "none")" })
        #expect(
            seen == [
                "sync 1 \(Self.traceparent)", "queue 1 \(Self.traceparent)", "sync 2 none", "queue 2 none",
            ])
        #expect(b.issues.events.isEmpty, "the authenticated envelope with a context verified: \(b.issues.events)")
    }

    @Test("a receiver with no propagator, or given a malformed traceparent, dispatches the event without a context")
    func receiverWithoutPropagator() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network)
        let b = try await Node("b", on: network)
        a.bus.contextPropagator = Trace.propagator
        let traces = SeenTraces(on: b.bus)
        try await Trace.$parent.withValue(Self.traceparent) { try await a.publish(1) }
        #expect(await traces.recorded.wait { $0.count == 2 })
        #expect(traces.recorded.events.allSatisfy { $0.trace == nil })

        b.bus.contextPropagator = Trace.propagator
        network.inject(
            #"{"v":3,"o":"\#(UUID().uuidString)","s":1,"n":"test.ping.v1","c":{"traceparent":"forged"},"ts":0,"p":{"from":"x","n":9}}"#
        )
        #expect(await traces.recorded.wait { $0.count == 4 })
        #expect(traces.recorded.events.filter { $0.n == 9 }.allSatisfy { $0.trace == nil })
    }
}
