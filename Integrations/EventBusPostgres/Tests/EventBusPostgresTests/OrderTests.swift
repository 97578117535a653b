import ClusterSupport
import EventBusPostgres
import Foundation
import Testing

extension PostgresBridgeTests {
    @Suite("Order: per-publisher order, and one total order for every receiver")
    struct OrderTests {
        @Test(
            "1,000 events from each of two concurrent publishers: in publish order, and the same order at every receiver"
        )
        func twoPublishersOneOrder() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b", "c", "d"]) { nodes in
                let (a, b, c, d) = (nodes[0], nodes[1], nodes[2], nodes[3])
                let atC = Recorder(Ping.self, on: c.bus)
                let atD = Recorder(Ping.self, on: d.bus)
                let atA = Recorder(Ping.self, on: a.bus)
                let count = 1_000
                let start = ContinuousClock.now
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for publisher in [a, b] {
                        group.addTask {
                            for n in 0..<count { try await publisher.bridge.publish(Ping(from: publisher.name, n: n)) }
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(await atC.wait(forCount: 2 * count, timeout: .seconds(60)))
                #expect(await atD.wait(forCount: 2 * count, timeout: .seconds(60)))
                let elapsed = start.duration(to: .now)
                #expect(await atA.wait(forCount: 2 * count, timeout: .seconds(30)))
                try await Task.sleep(for: .milliseconds(200))
                // Booleans, not arrays, in the expectations: a failure must not print 2,000 events.
                #expect(atC.events.count == 2 * count)
                let sameOrder = atC.events == atD.events
                #expect(sameOrder, "two receivers saw different orders")
                for publisher in [a, b] {
                    let inOrderAtC = atC.events.filter { $0.from == publisher.name }.map(\.n) == Array(0..<count)
                    let inOrderAtA = atA.events.filter { $0.from == publisher.name }.map(\.n) == Array(0..<count)
                    #expect(inOrderAtC, "\(publisher.name)'s events out of order at c")
                    #expect(inOrderAtA, "\(publisher.name)'s events out of order at a")
                }
                // Interleaved, not one publisher after the other: the order test means something.
                let firstB = atC.events.firstIndex { $0.from == b.name } ?? 0
                let lastA = atC.events.lastIndex { $0.from == a.name } ?? 0
                #expect(firstB < lastA)
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                print("bridge: order test, \(2 * count) events to 3 receivers in \(String(format: "%.2f", seconds)) s")
            }
        }

        @Test(
            "a burst of 500 concurrent publishes from one bridge: each delivered once, in one order for all receivers")
        func burst() async throws {
            var settings = PostgresEventBridge.Configuration()
            settings.publishBufferCapacity = 10_000
            try await PostgresBridgeTests.withNodes(["a", "b", "c"], configuration: settings) { nodes in
                let (a, b, c) = (nodes[0], nodes[1], nodes[2])
                let atB = Recorder(Ping.self, on: b.bus)
                let atC = Recorder(Ping.self, on: c.bus)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for n in 0..<500 {
                        group.addTask { try await a.bridge.publish(Ping(from: "a", n: n)) }
                    }
                    try await group.waitForAll()
                }
                #expect(await atB.wait(forCount: 500))
                #expect(await atC.wait(forCount: 500))
                try await Task.sleep(for: .milliseconds(200))
                // The tasks raced, so the numbers come in any order, but once each and in one order.
                let exactlyOnce = atB.events.map(\.n).sorted() == Array(0..<500)
                let sameOrder = atB.events == atC.events
                #expect(exactlyOnce)
                #expect(sameOrder)
            }
        }
    }
}
