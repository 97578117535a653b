import EventBus
import EventBusRemote
import Foundation
import MetricsTestKit
import Testing

/// Another event type, which some nodes do not register.
struct Other: Event, Codable, Equatable {
    let text: String
}

@Suite(
    "Freshness and versions: a replay to a restarted receiver is refused with a key, envelopes name their version, no false loss"
)
struct FreshnessTests {
    /// Short freshness limits (a tolerance of 300 ms before listening began), so a test can outwait them.
    static func short(_ settings: inout RemoteBridge.Configuration) {
        settings.maximumClockSkew = .milliseconds(100)
        settings.publishTimeout = .milliseconds(200)
    }

    /// `a` publishes pings 1...3 to `b`; a new `b` starts on the network after the tolerance; the
    /// envelope of ping 1 is sent again; `a` publishes ping 4. Returns the new `b`.
    static func replayToRestartedReceiver(key: Data?, metrics: TestMetrics? = nil) async throws -> (Node, Node) {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network, key: key, configure: short)
        let b = try await Node("b", on: network, key: key, configure: short)
        for n in 1...3 { try await a.publish(n) }
        #expect(await b.waitFor(a, 3))
        try await Task.sleep(for: .milliseconds(400))
        let restarted = try await Node("b", on: network, key: key, metrics: metrics, configure: short)
        network.inject(try #require(network.sent.first { $0.contains(#""n":1}"#) }))
        try await a.publish(4)
        #expect(await restarted.waitFor(a, 4))
        try await Task.sleep(for: .milliseconds(50))  // room for a late report
        return (a, restarted)
    }

    @Test(
        "with a key, an envelope replayed to a restarted receiver is refused as stale, counted, and the origin's next event is not reported as missed"
    )
    func staleReplayRefused() async throws {
        let metrics = TestMetrics()
        let (a, restarted) = try await Self.replayToRestartedReceiver(key: key(3), metrics: metrics)
        #expect(restarted.numbers(from: a) == [4])
        #expect(restarted.issues.events.count == 1, "\(restarted.issues.events)")
        guard case .stale(let origin, 1, let reason) = restarted.issues.events.first else {
            Issue.record("expected stale, got \(restarted.issues.events)")
            return
        }
        #expect(origin == a.bridge.origin && reason.contains("before this receiver began listening"), "\(reason)")
        #expect(try metrics.expectCounter("eventbus.bridge.refused", [("reason", "stale")]).totalValue == 1)
        #expect(try metrics.expectCounter("eventbus.bridge.missed").totalValue == 0)
    }

    @Test("without a key, the same replay is delivered again (the guarantee table says so)")
    func replayWithoutKeyIsDelivered() async throws {
        let (a, restarted) = try await Self.replayToRestartedReceiver(key: nil)
        #expect(restarted.numbers(from: a) == [1, 4])
    }

    @Test(
        "with a key, an envelope signed longer ago than maximumEnvelopeAge is refused by a receiver listening all along"
    )
    func tooOld() async throws {
        let network = InMemoryNetwork()
        let configure: (inout RemoteBridge.Configuration) -> Void = {
            $0.maximumEnvelopeAge = .milliseconds(100)
            $0.maximumClockSkew = .milliseconds(50)
        }
        let a = try await Node("a", on: network, key: key(3), configure: configure)
        let b = try await Node("b", on: network, key: key(3), configure: configure)
        let old = try a.bridge.transactionalEnvelope(for: Ping(from: "a", n: 1))
        try await Task.sleep(for: .milliseconds(300))
        network.inject(old)
        #expect(await b.issues.wait { !$0.isEmpty })
        guard case .stale(_, _, let reason) = b.issues.events.first else {
            Issue.record("expected stale, got \(b.issues.events)")
            return
        }
        #expect(reason.contains("maximumEnvelopeAge"), "\(reason)")
        #expect(b.pings.events.isEmpty)
        // Read from a durable store, its age does not matter: the store's cursor rules out repeats.
        _ = await b.bridge.inbox.deliverAndWait([old])
        #expect(b.pings.events == [Ping(from: "a", n: 1)])
    }

    @Test("with a key, an envelope signed for another channel does not authenticate")
    func channelUnderTheMAC() async throws {
        let first = InMemoryNetwork(channel: "orders")
        let second = InMemoryNetwork(channel: "billing")
        let a = try await Node("a", on: first, key: key(3))
        let b = try await Node("b", on: second, key: key(3))
        second.inject(try a.bridge.transactionalEnvelope(for: Ping(from: "a", n: 1)))
        #expect(await b.issues.wait { !$0.isEmpty })
        guard case .unauthenticated(let reason, _, _) = b.issues.events.first else {
            Issue.record("expected unauthenticated, got \(b.issues.events)")
            return
        }
        #expect(reason.contains("wrong MAC"))
        #expect(b.pings.events.isEmpty)
    }

    @Test(
        "versions: 3 is written; 2 is read and written only as previousEnvelopeVersion allows; a future version is refused, saying so"
    )
    func versionNegotiation() async throws {
        let network = InMemoryNetwork()
        let current = try await Node("current", on: network)
        let upgrading = try await Node("upgrading", on: network) { $0.previousEnvelopeVersion = .published }
        let reading = try await Node("reading", on: network) { $0.previousEnvelopeVersion = .accepted }
        try await current.publish(1)
        try await upgrading.publish(1)
        #expect(await reading.waitFor(current, 1))
        #expect(await reading.waitFor(upgrading, 1))
        #expect(await upgrading.waitFor(current, 1))
        #expect(network.sent.filter { $0.hasPrefix(#"{"v":3,"#) }.count == 1)
        #expect(network.sent.filter { $0.hasPrefix(#"{"v":2,"#) }.count == 1)
        // The current node refuses version 2 (step 3 of the upgrade), and says why.
        #expect(await current.issues.wait { !$0.isEmpty })
        #expect(current.numbers(from: upgrading).isEmpty)
        guard case .undecodableNotification(let reason, _, _) = current.issues.events.first else {
            Issue.record("expected undecodableNotification, got \(current.issues.events)")
            return
        }
        #expect(reason.contains("unsupported envelope version 2"), "\(reason)")
        // Two versions ahead: refused by all, saying to upgrade (one ahead is read: EventVersionTests).
        network.inject(#"{"v":5,"o":"\#(UUID().uuidString)","s":1,"n":"test.ping.v1","p":{"from":"x","n":1}}"#)
        #expect(await reading.issues.wait { !$0.isEmpty })
        guard case .undecodableNotification(let future, _, _) = reading.issues.events.first else {
            Issue.record("expected undecodableNotification, got \(reading.issues.events)")
            return
        }
        #expect(future.contains("version 5 is newer than this instance reads"), "\(future)")
    }

    @Test("with a key, a version 2 envelope signed by an upgrading instance is read by one that accepts version 2")
    func signedPreviousVersion() async throws {
        let network = InMemoryNetwork()
        let upgrading = try await Node("upgrading", on: network, key: key(3)) {
            $0.previousEnvelopeVersion = .published
        }
        let reading = try await Node("reading", on: network, key: key(3)) { $0.previousEnvelopeVersion = .accepted }
        try await upgrading.publish(1)
        #expect(await reading.waitFor(upgrading, 1))
        #expect(reading.issues.events.isEmpty, "\(reading.issues.events)")
    }

    @Test(
        "a durable transport's wake-up channel: an event envelope is refused (notFromStore), never dispatched; its own heartbeat comes back"
    )
    func signalChannel() async throws {
        let network = InMemoryNetwork()
        let metrics = TestMetrics()
        let node = try await Node("a", on: network, metrics: metrics)
        let stranger = UUID()
        let delivery = node.bridge.inbox.deliverSignal(
            envelope(origin: stranger, sequence: 1, payload: #"{"from":"x","n":1}"#))
        #expect(delivery == .handled)
        let (heartbeat, number) = node.bridge.inbox.heartbeat()
        #expect(node.bridge.inbox.deliverSignal(heartbeat) == .ownHeartbeat(number))
        #expect(await node.issues.wait { !$0.isEmpty })
        #expect(
            node.issues.events.map(\.description) == [
                BridgeIssue.notFromStore(origin: stranger, sequence: 1).description
            ])
        #expect(node.pings.events.isEmpty)
        #expect(try metrics.expectCounter("eventbus.bridge.refused", [("reason", "not_from_store")]).totalValue == 1)
    }

    @Test(
        "with a key, an event of a type the receiver does not register is reported once and its sequence recorded: the next event is no loss"
    )
    func unknownWireNameWithKey() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network, key: key(3))
        a.bridge.register(Other.self, as: "test.other.v1")
        let b = try await Node("b", on: network, key: key(3))
        try await a.publish(1)
        try await a.bridge.publish(Other(text: "not for b"))
        try await a.publish(2)
        #expect(await b.waitFor(a, 2))
        try await Task.sleep(for: .milliseconds(50))
        #expect(
            b.issues.events.map(\.description) == [
                BridgeIssue.unknownWireName("test.other.v1", origin: a.bridge.origin).description
            ])
    }
}
