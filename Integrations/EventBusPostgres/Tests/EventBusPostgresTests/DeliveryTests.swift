import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import Testing

extension PostgresBridgeTests {
    @Suite("Delivery: exactly once each way, no echo, on the bus queue")
    struct DeliveryTests {
        @Test(
            "each instance gets the other's event exactly once and its own exactly once (locally), off the event loops")
        func exactlyOnceEachWayNoEcho() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let checks = ThreadChecks()
                let atA = Recorder(Ping.self, on: a.bus) { _ in checks.record() }
                let atB = Recorder(Ping.self, on: b.bus) { _ in checks.record() }

                try await a.bridge.publish(Ping(from: "a", n: 1))
                // The publisher's own subscribers ran before publish returned (local dispatch).
                #expect(atA.events == [Ping(from: "a", n: 1)])
                try await b.bridge.publish(Ping(from: "b", n: 1))

                #expect(await atA.wait(forCount: 2))
                #expect(await atB.wait(forCount: 2))
                // Long enough for an echo or a duplicate to arrive, were there one: a marker sent
                // after them arrives after them (one order for everyone).
                try await a.bridge.publish(Ping(from: "a", n: 2))
                #expect(await atB.wait(forCount: 3))
                try await Task.sleep(for: .milliseconds(300))
                // Each exactly once; a local dispatch and a remote arrival may come in either order.
                let expected = ["a1", "a2", "b1"]
                #expect(atA.events.map { "\($0.from)\($0.n)" }.sorted() == expected)
                #expect(atB.events.map { "\($0.from)\($0.n)" }.sorted() == expected)
                #expect(atB.events.filter { $0.from == "a" }.map(\.n) == [1, 2])
                #expect(checks.onEventLoop == 0, "a handler ran on a NIO event loop")
                #expect(a.issues.events.isEmpty && b.issues.events.isEmpty, "\(a.issues.events) \(b.issues.events)")
            }
        }

        @Test("a keyed event keeps its key: ofType subscribers on the receiver get it, others not")
        func keysSurvive() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let kitchen = Recorder(RoomMessage.self, on: b.bus)
                let lobby = Recorder(RoomMessage.self, on: b.bus, key: "lobby")
                try await a.bridge.publish(RoomMessage(room: "kitchen", text: "hot"))
                try await a.bridge.publish(RoomMessage(room: "lobby", text: "hi"))
                #expect(await kitchen.wait(forCount: 2))
                #expect(await lobby.wait(forCount: 1))
                #expect(lobby.events == [RoomMessage(room: "lobby", text: "hi")])
            }
        }

        @Test("received events are dispatched on the bus queue: one serial queue, never a NIO event loop")
        func receivedOnTheBusQueue() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let checks = ThreadChecks()
                let atB = Recorder(Ping.self, on: b.bus) { _ in checks.record() }
                // Statuses and issues take the same road.
                let issues = Recorder(BridgeIssue.self, on: b.bus) { _ in checks.record() }
                for n in 0..<50 { try await a.bridge.publish(Ping(from: "a", n: n)) }
                try await PostgresBridgeTests.rawNotify("junk", on: b.bridge.channel)
                #expect(await atB.wait(forCount: 50))
                #expect(await issues.wait(forCount: 1))
                #expect(checks.onEventLoop == 0)
                #expect(checks.calls == 51)
                #expect(checks.maximumConcurrency == 1, "the bus queue is serial")
            }
        }
    }
}

/// Counts handler calls made on a NIO event loop, and how many ran at once.
final class ThreadChecks: Sendable {
    private let state = NIOLockedValueBox((calls: 0, onEventLoop: 0, running: 0, maximum: 0))

    func record() {
        let onLoop = MultiThreadedEventLoopGroup.currentEventLoop != nil
        state.withLockedValue { state in
            state.calls += 1
            state.running += 1
            state.maximum = max(state.maximum, state.running)
            if onLoop { state.onEventLoop += 1 }
        }
        Thread.sleep(forTimeInterval: 0.001)  // widen the window for two handlers to overlap
        state.withLockedValue { $0.running -= 1 }
    }

    var calls: Int { state.withLockedValue { $0.calls } }
    var onEventLoop: Int { state.withLockedValue { $0.onEventLoop } }
    var maximumConcurrency: Int { state.withLockedValue { $0.maximum } }
}
