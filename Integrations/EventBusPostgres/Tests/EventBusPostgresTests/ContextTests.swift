import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import NIOConcurrencyHelpers
import Testing

extension PostgresBridgeTests {
    @Suite("Trace context: a NOTIFY carries the publisher's traceparent to the other instance's handlers")
    struct ContextTests {
        /// The trace, as a tracing library keeps it: a task-local W3C `traceparent`.
        enum Trace {
            @TaskLocal static var parent: String?
        }

        /// Carries `Trace.parent` within a process, and as a `traceparent` header across processes.
        struct TraceparentPropagator: EventContextPropagator {
            func capture() -> (any Sendable)? { Trace.parent }

            func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {
                Trace.$parent.withValue(context as? String, operation: body)
            }

            func restore(
                _ context: any Sendable, for delivery: EventContextDelivery, isolation: isolated (any Actor)?,
                _ body: () async -> Void
            ) async {
                await Trace.$parent.withValue(context as? String, operation: body)
            }

            func headers(of context: any Sendable) -> [String: String] {
                (context as? String).map { ["traceparent": $0] } ?? [:]
            }

            func context(fromHeaders headers: [String: String]) -> (any Sendable)? {
                headers["traceparent"]
            }
        }

        @Test(
            "a handler on the receiving instance runs with the publisher's traceparent; one outside a trace with none")
        func traceparentOverPostgres() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                a.bus.contextPropagator = TraceparentPropagator()
                b.bus.contextPropagator = TraceparentPropagator()
                let traces = NIOLockedValueBox<[Int: String]>([:])
                let atB = Recorder(Ping.self, on: b.bus) { ping in
                    traces.withLockedValue { $0[ping.n] = Trace.parent ?? "none" }
                }
                let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
                try await Trace.$parent.withValue(traceparent) { try await a.bridge.publish(Ping(from: "a", n: 1)) }
                try await a.bridge.publish(Ping(from: "a", n: 2))
                #expect(await atB.wait(forCount: 2))
                #expect(traces.withLockedValue { $0 } == [1: traceparent, 2: "none"])
                #expect(b.issues.events.isEmpty, "\(b.issues.events)")
            }
        }
    }
}
