import EventBus
import EventBusRemote
import Foundation
import Testing

@Suite("Pending events: encoded where published, sealed where sent, refused when altered or unsigned")
struct PendingEventTests {
    @Test("a pending event made by one bridge is sealed by another with the same key and delivered everywhere")
    func sealedElsewhere() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network, key: key(1))
        let b = try await Node("b", on: network, key: key(1))
        let pending = try a.bridge.pendingEvent(for: Ping(from: "a", n: 1), binding: "row-1")
        #expect(pending.mac?.utf8.count == 64)
        #expect(a.pings.events.isEmpty, "nothing dispatched when encoding")
        let envelope = try b.bridge.seal(pending, binding: "row-1")
        #expect(envelope.contains(b.bridge.origin.uuidString) && envelope.contains(#""t":1"#))
        try await b.transport.send([envelope])
        #expect(await a.pings.wait { $0 == [Ping(from: "a", n: 1)] })
        #expect(await b.pings.wait { $0 == [Ping(from: "a", n: 1)] }, "the sealing bridge delivers its own, once")
    }

    @Test("with a key: another binding, an altered payload, no MAC and another key are refused and reported")
    func refused() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network, key: key(1))
        let pending = try a.bridge.pendingEvent(for: Ping(from: "a", n: 1), binding: "row-1")
        let altered = RemoteBridge.PendingEvent(
            wireName: pending.wireName, keyJSON: nil, contextJSON: nil, payload: #"{"from":"a","n":666}"#,
            mac: pending.mac)
        let unsigned = RemoteBridge.PendingEvent(
            wireName: pending.wireName, keyJSON: nil, contextJSON: nil, payload: pending.payload, mac: nil)
        let other = try await Node("other", on: InMemoryNetwork(), key: key(2))
        let cases: [(RemoteBridge, RemoteBridge.PendingEvent, String)] = [
            (a.bridge, pending, "row-2"), (a.bridge, altered, "row-1"), (a.bridge, unsigned, "row-1"),
            (other.bridge, pending, "row-1"),
        ]
        for (bridge, event, binding) in cases {
            #expect(throws: RemoteBridgeError.self) { try bridge.seal(event, binding: binding) }
        }
        #expect(await a.issues.wait { $0.count >= 3 })
        #expect(await other.issues.wait { $0.count >= 1 })
        let reported = a.issues.events + other.issues.events
        #expect(
            reported.allSatisfy { if case .unauthenticated = $0 { true } else { false } }, "\(reported)")
        // Without a key nothing is checked but the wire name.
        let plain = try await Node("plain", on: InMemoryNetwork())
        #expect(try plain.bridge.seal(unsigned, binding: "any").contains(#""n":"test.ping.v1""#))
        let badName = RemoteBridge.PendingEvent(
            wireName: #"x","p":1}"#, keyJSON: nil, contextJSON: nil, payload: "{}", mac: nil)
        #expect(throws: RemoteBridgeError.self) { try plain.bridge.seal(badName, binding: "any") }
    }

    @Test(
        "a pending event of a versioned type keeps its version (name@2, or the older shape it publishes) and seals; a malformed version is refused"
    )
    func versioned() async throws {
        let network = InMemoryNetwork()
        let (writer, _) = try await EventVersionTests.upgraded("writer", on: network)
        let (stepOne, _) = try await EventVersionTests.upgraded("step-one", on: network, publishing: 1)
        let (reader, orders) = try await EventVersionTests.upgraded("reader", on: network)
        let pending = try writer.bridge.pendingEvent(for: Order(id: 1, carrier: "ups"), binding: "r")
        let older = try stepOne.bridge.pendingEvent(for: Order(id: 2, carrier: "ups"), binding: "r")
        #expect(pending.wireName == "test.order@2" && older.wireName == "test.order" && older.payload == #"{"id":2}"#)
        try await writer.transport.send([try writer.bridge.seal(pending, binding: "r")])
        try await writer.transport.send([try writer.bridge.seal(older, binding: "r")])
        #expect(await orders.wait { $0 == [Order(id: 1, carrier: "ups"), Order(id: 2, carrier: "unknown")] })
        for name in ["test.order@1", "test.order@02", "test.order@", "test.order@x"] {
            let bad = RemoteBridge.PendingEvent(wireName: name, keyJSON: nil, contextJSON: nil, payload: "{}", mac: nil)
            #expect(throws: RemoteBridgeError.self, "\(name)") { try writer.bridge.seal(bad, binding: "r") }
        }
        withExtendedLifetime((stepOne, reader)) {}
    }

    @Test("an event too large for the transport however it is sealed, or unregistered, is refused when encoded")
    func tooLarge() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network)
        a.bridge.register(Big.self, as: "test.big.v1")
        #expect(throws: RemoteBridgeError.self) {
            try a.bridge.pendingEvent(for: Big(text: String(repeating: "x", count: 100_000)), binding: "b")
        }
        #expect(throws: Never.self) { try a.bridge.pendingEvent(for: Big(text: "x"), binding: "b") }
        #expect(throws: RemoteBridgeError.self) { try a.bridge.pendingEvent(for: Unregistered(), binding: "b") }
    }
}

private struct Big: Event, Codable { let text: String }
private struct Unregistered: Event, Codable {}
