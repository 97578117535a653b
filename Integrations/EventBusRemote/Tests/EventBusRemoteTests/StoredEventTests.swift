import EventBus
import EventBusRemote
import Foundation
import Testing

@Suite("A durable transport's own handlers: a stored payload decoded without recording or dispatching it")
struct StoredEventTests {
    @Test(
        "storedEvent decodes a registered event and records nothing (the payload is then delivered once); it holds a newer event version; garbage and unknown names are not events"
    )
    func storedEvent() async throws {
        let network = InMemoryNetwork()
        let node = try await Node("a", on: network)
        let handled = Recorded(Ping.self, on: node.bus)
        let inbox = node.bridge.inbox
        let origin = UUID()
        let payload = envelope(origin: origin, sequence: 1, payload: #"{"from":"x","n":7}"#)
        for _ in 1...2 {
            guard case .event(let decoded) = inbox.storedEvent(payload) else {
                Issue.record("not decoded: \(inbox.storedEvent(payload))")
                return
            }
            #expect(decoded.event as? Ping == Ping(from: "x", n: 7))
            #expect(decoded.origin == origin && decoded.sequence == 1 && decoded.wireName == "test.ping.v1")
        }
        #expect(handled.events.isEmpty, "dispatched by storedEvent")
        #expect(await inbox.deliverAndWait([payload]) == RemoteInbox.StoredBatch(handled: 1, held: nil))
        #expect(handled.events == [Ping(from: "x", n: 7)], "recorded by storedEvent, then dropped as a duplicate")

        let newer = envelope(origin: origin, sequence: 2, name: "test.ping.v1@2", payload: #"{"from":"x","n":8}"#)
        guard case .held = inbox.storedEvent(newer) else {
            Issue.record("a newer event version is not held: \(inbox.storedEvent(newer))")
            return
        }
        for other in ["junk", envelope(origin: origin, sequence: 3, name: "test.other.v1", payload: "{}")] {
            guard case .notAnEvent = inbox.storedEvent(other) else {
                Issue.record("\(other) taken for an event: \(inbox.storedEvent(other))")
                return
            }
        }
    }
}
