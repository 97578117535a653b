import EventBus
import EventBusRemote
import Foundation
import Testing

@Suite("What a durable transport needs from the inbox: delivered means handled, redeliveries reported")
struct DurableInboxTests {
    @Test("deliverAndWait returns only once the synchronous handlers of the whole batch have returned")
    func deliverAndWaitWaitsForHandlers() async throws {
        let network = InMemoryNetwork()
        let node = try await Node("a", on: network)
        let handled = Recorded(Ping.self, on: node.bus)
        // A slow handler: a plain deliver(_:) returns long before it has run.
        let slow = node.bus.on(Ping.self).next { _ in Thread.sleep(forTimeInterval: 0.02) }
        defer { slow.dispose() }
        let origin = UUID()
        let payloads = (1...10).map { n in
            envelope(origin: origin, sequence: UInt64(n), payload: #"{"from":"x","n":\#(n)}"#)
        }
        let batch = await node.bridge.inbox.deliverAndWait(payloads)
        #expect(batch == RemoteInbox.StoredBatch(handled: 10, held: nil))
        #expect(handled.events.map(\.n) == Array(1...10), "handled when it returned: \(handled.events.count) of 10")
    }

    @Test("two bridges on one bus: each waits for its own batch only, and neither waits forever")
    func twoBridgesOnOneBus() async throws {
        let bus = EventBus()
        let network = InMemoryNetwork()
        let bridges = (0..<2).map { _ in RemoteBridge(bus: bus, transport: network.makeTransport()) }
        for bridge in bridges { bridge.register(Ping.self, as: "test.ping.v1") }
        let handled = Recorded(Ping.self, on: bus)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, bridge) in bridges.enumerated() {
                group.addTask {
                    let origin = UUID()
                    let payloads = (1...50).map { n in
                        envelope(origin: origin, sequence: UInt64(n), payload: #"{"from":"\#(index)","n":\#(n)}"#)
                    }
                    _ = await bridge.inbox.deliverAndWait(payloads)
                    let own = handled.events.filter { $0.from == "\(index)" }.count
                    #expect(own == 50, "bridge \(index): \(own) of 50 handled when it returned")
                }
            }
            try await group.waitForAll()
        }
    }

    @Test("redelivering is reported before the events delivered after it")
    func redeliveringIsReportedFirst() async throws {
        let network = InMemoryNetwork()
        let node = try await Node("a", on: network)
        let order = Recorded(Ordered.self, on: node.bus)
        let issues = node.bus.on(BridgeIssue.self).next { issue in
            if case .redelivered(let consumer, let count) = issue {
                node.bus.dispatch(Ordered(text: "\(consumer) \(count)"))
            }
        }
        let pings = node.bus.on(Ping.self).next { ping in node.bus.dispatch(Ordered(text: "ping \(ping.n)")) }
        defer {
            issues.dispose()
            pings.dispose()
        }
        node.bridge.inbox.redelivering(consumer: "c", count: 2)
        let origin = UUID()
        _ = await node.bridge.inbox.deliverAndWait(
            (1...2).map { envelope(origin: origin, sequence: UInt64($0), payload: #"{"from":"x","n":\#($0)}"#) })
        #expect(order.events.map(\.text) == ["c 2", "ping 1", "ping 2"])
    }

    struct Ordered: Event { let text: String }
}
