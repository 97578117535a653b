import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import NIOConcurrencyHelpers
import Testing

extension PostgresBridgeTests {
    @Suite("Trace context: a NOTIFY carries the publisher's traceparent to the other instance's handlers")
    struct ContextTests {
        /// The trace, as a tracing library keeps it: a task-local W3C `traceparent`, carried as a
        /// header across processes.
        enum Trace {
            @TaskLocal static var parent: String?
            static let propagator = TaskLocalContextPropagator($parent, header: "traceparent")
        }

        @Test(
            "a handler on the receiving instance runs with the publisher's traceparent; one outside a trace with none")
        func traceparentOverPostgres() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                a.bus.contextPropagator = Trace.propagator
                b.bus.contextPropagator = Trace.propagator
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
