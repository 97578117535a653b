import EventBus
import EventBusRemote
import Foundation
import MetricsTestKit
import Testing

/// A bridge's swift-metrics counters against `TestMetrics`: published, received, refused (by
/// reason), missed and reconnects.
@Suite("Bridge metrics")
struct BridgeMetricsTests {
    @Test("publishes, receptions, a counted gap and a reconnection are counted on each side")
    func publishedReceivedMissedReconnects() async throws {
        let network = InMemoryNetwork()
        let sent = TestMetrics()
        let heard = TestMetrics()
        let a = try await Node("a", on: network, metrics: sent)
        let b = try await Node("b", on: network, metrics: heard)
        for n in 1...3 { try await a.publish(n) }
        #expect(await b.waitFor(a, 3))
        b.transport.setConnected(false)
        for n in 4...5 { try await a.publish(n) }
        b.transport.setConnected(true)
        try await a.publish(6)
        #expect(await b.waitFor(a, 6))
        #expect(await b.statuses.wait { $0.contains { if case .resumed = $0 { true } else { false } } })
        #expect(try sent.expectCounter("eventbus.bridge.published", [("mode", "serial")]).totalValue == 6)
        #expect(try heard.expectCounter("eventbus.bridge.received").totalValue == 4)
        #expect(try heard.expectCounter("eventbus.bridge.missed").totalValue == 2)
        #expect(try heard.expectCounter("eventbus.bridge.reconnects").totalValue == 1)
        #expect(try sent.expectCounter("eventbus.bridge.received").totalValue == 0, "no echo is counted as received")
    }

    @Test("refused envelopes are counted by reason, never by wire name or origin")
    func refusedByReason() async throws {
        let network = InMemoryNetwork()
        let heard = TestMetrics()
        let b = try await Node("b", on: network, metrics: heard)
        let stranger = UUID()
        network.inject("not json")
        network.inject(envelope(origin: stranger, sequence: 1, name: "nobody.v1", payload: #"{"from":"x","n":1}"#))
        let first = envelope(origin: stranger, sequence: 2, payload: #"{"from":"x","n":2}"#)
        network.inject(first)
        network.inject(first)
        #expect(await b.issues.wait { $0.count == 3 })
        func refused(_ reason: String) throws -> Int64 {
            try heard.expectCounter("eventbus.bridge.refused", [("reason", reason)]).totalValue
        }
        #expect(try refused("malformed") == 1)
        #expect(try refused("unknown_wire_name") == 1)
        #expect(try refused("duplicate") == 1)
        #expect(try heard.expectCounter("eventbus.bridge.received").totalValue == 1)
        let values = heard.counters.flatMap(\.dimensions).map(\.1)
        #expect(!values.contains("nobody.v1") && !values.contains(stranger.uuidString))
    }
}
