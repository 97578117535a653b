import EventBus
import EventBusRemote
import Foundation
import MetricsTestKit
import Testing

/// A durable transport's lag reports: kept per consumer for `RemoteBridge.lag`, recorded as gauges,
/// and the announcements of operations on a consumer.
@Suite("Consumer lag and operations' reports")
struct ConsumerLagTests {
    @Test("each consumer's latest lag is kept, sorted by name, and recorded in its two gauges")
    func lagKeptAndGauged() async throws {
        let metrics = TestMetrics()
        let node = try await Node("a", on: InMemoryNetwork(), metrics: metrics)
        #expect(node.bridge.lag.isEmpty, "nothing before a first measure")
        node.bridge.inbox.lag(ConsumerLag(consumer: "billing", unread: 12, oldestUnreadAge: .milliseconds(2_500)))
        node.bridge.inbox.lag(
            ConsumerLag(consumer: "audit#1", group: "audit", partition: 1, unread: 3, oldestUnreadAge: .seconds(1)))
        node.bridge.inbox.lag(ConsumerLag(consumer: "billing", unread: 0, oldestUnreadAge: nil))
        #expect(node.bridge.lag.map(\.consumer) == ["audit#1", "billing"])
        #expect(node.bridge.lag.last?.unread == 0 && node.bridge.lag.last?.oldestUnreadAge == nil)
        let unread = try metrics.expectGauge("eventbus.bridge.consumer_lag", [("consumer", "billing")])
        #expect(unread.values == [12, 0])
        let age = try metrics.expectGauge("eventbus.bridge.consumer_lag_seconds", [("consumer", "billing")])
        #expect(age.values == [2.5, 0])
        let partition = try metrics.expectGauge(
            "eventbus.bridge.consumer_lag", [("consumer", "audit#1"), ("group", "audit"), ("partition", "1")])
        #expect(partition.lastValue == 3)
        #expect(
            ConsumerLag(consumer: "x", unread: 7, unreadIsExact: false, oldestUnreadAge: nil).description
                == "x: at least 7 unread")
    }

    @Test("a group's partitions: those no longer measured (given up) are forgotten, their gauges at 0")
    func groupPartitionsForgotten() async throws {
        let metrics = TestMetrics()
        let node = try await Node("a", on: InMemoryNetwork(), metrics: metrics)
        func partition(_ index: Int, _ unread: Int) -> ConsumerLag {
            ConsumerLag(
                consumer: "billing#\(index)", group: "billing", partition: index, unread: unread,
                oldestUnreadAge: unread > 0 ? .seconds(1) : nil)
        }
        node.bridge.inbox.lag(ConsumerLag(consumer: "audit", unread: 1, oldestUnreadAge: .seconds(2)))
        node.bridge.inbox.lag([partition(0, 4), partition(1, 5)], ofGroup: "billing")
        #expect(node.bridge.lag.map(\.consumer) == ["audit", "billing#0", "billing#1"])
        node.bridge.inbox.lag([partition(1, 2)], ofGroup: "billing")
        #expect(node.bridge.lag.map(\.consumer) == ["audit", "billing#1"], "partition 0 given up, audit kept")
        let given = try metrics.expectGauge(
            "eventbus.bridge.consumer_lag", [("consumer", "billing#0"), ("group", "billing"), ("partition", "0")])
        #expect(given.values == [4, 0])
    }

    @Test("a cursor reset and a removed consumer are reported on the bus, in order with the events")
    func operationsAnnounced() async throws {
        let node = try await Node("a", on: InMemoryNetwork())
        node.bridge.inbox.cursorReset(consumer: "billing", to: "outbox row 6", again: 15, skipped: 0)
        node.bridge.inbox.consumerRemoved("billing")
        #expect(await node.issues.wait { $0.count == 2 })
        let descriptions = node.issues.events.map(\.description)
        #expect(descriptions.first?.contains("reset to outbox row 6: 15 events delivered again, 0 skipped") == true)
        #expect(descriptions.last?.contains("was removed while it ran") == true, "\(descriptions)")
    }
}
