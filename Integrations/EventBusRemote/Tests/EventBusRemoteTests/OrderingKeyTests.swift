import EventBus
import EventBusRemote
import Foundation
import Testing

/// An event with a key, for the ordering key.
private struct Keyed: Event, Codable {
    let room: String
    var eventType: String { room }
}

@Suite("Ordering keys: what a partitioning transport orders an envelope by")
struct OrderingKeyTests {
    @Test("an envelope's ordering key is its event's key, else its origin; a heartbeat or foreign text has none")
    func orderingKeys() async throws {
        let network = InMemoryNetwork()
        let bus = EventBus()
        let bridge = RemoteBridge(bus: bus, transport: network.makeTransport(), configuration: .init())
        bridge.register(Keyed.self, as: "test.keyed.v1")
        bridge.register(Ping.self, as: "test.ping.v1")
        try await bridge.publish(Keyed(room: #"lobby "7" \ east"#))
        try await bridge.publish(Ping(from: "a", n: 1))
        let sent = network.sent
        try #require(sent.count == 2)
        #expect(RemoteBridge.orderingKey(ofEnvelope: sent[0]) == #""lobby \"7\" \\ east""#)
        #expect(RemoteBridge.orderingKey(ofEnvelope: sent[1]) == bridge.origin.uuidString)
        let origin = UUID()
        #expect(RemoteBridge.orderingKey(ofEnvelope: #"{"v":3,"o":"\#(origin.uuidString)","h":4}"#) == nil)
        #expect(RemoteBridge.orderingKey(ofEnvelope: "not an envelope") == nil)
        #expect(RemoteBridge.orderingKey(ofEnvelope: #"{"v":3,"o":"short","s":1,"n":"x"}"#) == nil)
        // A key whose closing quote is missing (a truncated text) has no ordering key.
        #expect(
            RemoteBridge.orderingKey(ofEnvelope: #"{"v":3,"o":"\#(origin.uuidString)","s":1,"n":"x","k":"ab\""#) == nil)
    }
}
