import EventBus
import EventBusRemote
import Foundation
import Testing

@Suite(
    "Integrity: forged, unknown, cross-origin and replayed envelopes are reported, never silently drop or repeat a real event"
)
struct IntegrityTests {
    @Test(
        "without a key, a forged next-sequence envelope is delivered but the real one it displaces is reported, not silently dropped"
    )
    func forgedNextSequenceWithoutKey() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network)
        let b = try await Node("b", on: network)
        network.inject(envelope(origin: a.bridge.origin, sequence: 1, payload: #"{"from":"a","n":666}"#))
        try await a.publish(1)
        try await a.publish(2)
        #expect(await b.waitFor(a, 2))
        // The forgery took #1 (documented: without a key anyone can do this), the real #1 is reported.
        #expect(b.numbers(from: a) == [666, 2])
        #expect(await b.issues.wait { $0.count >= 1 })
        #expect(
            b.issues.events.map(\.description) == [
                BridgeIssue.duplicateDropped(origin: a.bridge.origin, sequence: 1, conflicting: true).description
            ])
        // And the instance whose origin was claimed reports the forgery, not taking it for its echo.
        #expect(await a.issues.wait { $0.count >= 1 })
        #expect(
            a.issues.events.map(\.description) == [
                BridgeIssue.claimsOwnOrigin(wireName: "test.ping.v1", sequence: 1).description
            ])
    }

    @Test(
        "with a key, a forged next-sequence envelope is refused before its (origin, sequence) is recorded: the real one is delivered"
    )
    func forgedNextSequenceWithKey() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network, key: key(1))
        let b = try await Node("b", on: network, key: key(1))
        network.inject(envelope(origin: a.bridge.origin, sequence: 1, payload: #"{"from":"a","n":666}"#))
        try await a.publish(1)
        try await a.publish(2)
        #expect(await b.waitFor(a, 2))
        #expect(b.numbers(from: a) == [1, 2])
        for node in [a, b] {
            #expect(await node.issues.wait { $0.count >= 1 })
            #expect(node.issues.events.count == 1, "\(node.issues.events)")
            guard case .unauthenticated(_, _, let excerpt) = node.issues.events.first else {
                Issue.record("\(node.name): expected unauthenticated, got \(node.issues.events)")
                continue
            }
            #expect(excerpt.contains(a.bridge.origin.uuidString))
        }
    }

    @Test("a tampered signed envelope, a wrong key and an unsigned envelope are refused and reported")
    func wrongKey() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network, key: key(1))
        let b = try await Node("b", on: network, key: key(2))
        let c = try await Node("c", on: network, key: key(1))
        try await a.publish(1)
        #expect(await c.waitFor(a, 1))
        // b has another key: it hears nothing, and says so once per envelope.
        #expect(await b.issues.wait { $0.count >= 1 })
        #expect(b.numbers(from: a).isEmpty)
        guard case .unauthenticated(let reason, _, _) = b.issues.events.first else {
            Issue.record("expected unauthenticated, got \(b.issues.events)")
            return
        }
        #expect(reason.contains("wrong MAC"))
        // The signed envelope with its payload altered is refused by c; so is an unsigned one.
        let signed = try #require(network.sent.first)
        network.inject(signed.replacingOccurrences(of: #""n":1"#, with: #""n":9"#))
        network.inject(envelope(origin: UUID(), sequence: 1, payload: #"{"from":"x","n":1}"#))
        try await a.publish(2)
        #expect(await c.waitFor(a, 2))
        #expect(c.numbers(from: a) == [1, 2])
        let reasons = c.issues.events.compactMap { issue -> String? in
            if case .unauthenticated(let reason, _, _) = issue { reason } else { nil }
        }
        #expect(reasons.count == 2 && reasons[0].contains("wrong MAC") && reasons[1].contains("no MAC"), "\(reasons)")
        #expect(c.issues.events.count == 2)
    }

    @Test(
        "an unknown wire name or an undecodable payload consumes no (origin, sequence): a later valid envelope with the same pair is delivered"
    )
    func refusedEnvelopesRecordNothing() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network)
        let b = try await Node("b", on: network)
        let stranger = UUID()
        network.inject(envelope(origin: stranger, sequence: 1, name: "nobody.v1", payload: "{}"))
        network.inject(envelope(origin: stranger, sequence: 1, payload: #"{"from":7}"#))
        network.inject(envelope(origin: stranger, sequence: 1, payload: #"{"from":"x","n":1}"#))
        try await a.publish(1)
        #expect(await b.waitFor(a, 1))
        #expect(b.pings.events.filter { $0.from == "x" } == [Ping(from: "x", n: 1)])
        let issues = b.issues.events
        #expect(issues.count == 2, "\(issues)")
        #expect(issues.contains { if case .unknownWireName("nobody.v1", stranger) = $0 { true } else { false } })
        #expect(
            issues.contains { if case .undecodablePayload("test.ping.v1", stranger, _) = $0 { true } else { false } })
    }

    @Test("an envelope claiming another instance's origin is reported by that instance, never taken for its own echo")
    func crossOriginClaims() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network)
        let b = try await Node("b", on: network)
        // Claims b's origin with a sequence b has not used yet, and one it has used.
        try await b.publish(1)
        #expect(await a.waitFor(b, 1))
        network.inject(envelope(origin: b.bridge.origin, sequence: 5, payload: #"{"from":"b","n":5}"#))
        network.inject(envelope(origin: b.bridge.origin, sequence: 1, payload: #"{"from":"b","n":100}"#))
        try await a.publish(1)
        #expect(await b.waitFor(a, 1))
        #expect(await b.issues.wait { $0.count >= 2 })
        #expect(
            b.issues.events.map(\.description) == [
                BridgeIssue.claimsOwnOrigin(wireName: "test.ping.v1", sequence: 5).description,
                BridgeIssue.claimsOwnOrigin(wireName: "test.ping.v1", sequence: 1).description,
            ])
        // a cannot tell the forgery at #5 (no key) but counts the gap it makes, and reports the #1 clash.
        #expect(a.numbers(from: b) == [1, 5])
        #expect(
            a.issues.events.map(\.description) == [
                BridgeIssue.missed(origin: b.bridge.origin, count: 3, before: 5).description,
                BridgeIssue.duplicateDropped(origin: b.bridge.origin, sequence: 1, conflicting: true).description,
            ])
    }

    @Test("a replay inside the duplicate window is dropped and reported, by receivers and by the sender itself")
    func replayInsideWindow() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network)
        let b = try await Node("b", on: network)
        try await a.publish(1)
        try await a.publish(2)
        #expect(await b.waitFor(a, 2))
        let first = try #require(network.sent.first)
        network.inject(first)
        try await a.publish(3)
        #expect(await b.waitFor(a, 3))
        #expect(b.numbers(from: a) == [1, 2, 3])
        #expect(a.numbers(from: a) == [1, 2, 3])
        let replayed = BridgeIssue.duplicateDropped(origin: a.bridge.origin, sequence: 1, conflicting: false)
        #expect(b.issues.events.map(\.description) == [replayed.description])
        #expect(await a.issues.wait { $0.count >= 1 })
        #expect(a.issues.events.map(\.description) == [replayed.description])
    }

    @Test("a replay older than the duplicate window is dropped and reported, not delivered a second time")
    func replayOutsideWindow() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network, window: 4)
        let b = try await Node("b", on: network, window: 4)
        for n in 1...10 { try await a.publish(n) }
        #expect(await b.waitFor(a, 10))
        let first = try #require(network.sent.first)
        network.inject(first)
        network.inject(network.sent[8])  // #9: still inside the window
        try await a.publish(11)
        #expect(await b.waitFor(a, 11))
        #expect(b.numbers(from: a) == Array(1...11))
        #expect(
            b.issues.events.map(\.description) == [
                BridgeIssue.olderThanWindow(origin: a.bridge.origin, sequence: 1, latest: 10).description,
                BridgeIssue.duplicateDropped(origin: a.bridge.origin, sequence: 9, conflicting: false).description,
            ])
    }

    @Test("a transactional envelope is delivered once everywhere, its sender included, and a replay of it is reported")
    func transactionalEcho() async throws {
        let network = InMemoryNetwork()
        let a = try await Node("a", on: network, key: key(3))
        let b = try await Node("b", on: network, key: key(3))
        let payload = try a.bridge.transactionalEnvelope(for: Ping(from: "a", n: 1))
        try await a.transport.send([payload])  // as a transport sends it at COMMIT
        #expect(await a.waitFor(a, 1))
        #expect(await b.waitFor(a, 1))
        network.inject(payload)
        try await a.publish(2)
        #expect(await b.waitFor(a, 2))
        #expect(await a.issues.wait { $0.count >= 1 })
        #expect(a.numbers(from: a) == [1, 2])
        #expect(b.numbers(from: a) == [1, 2])
        #expect(a.issues.events.count == 1 && b.issues.events.count == 1, "\(a.issues.events) \(b.issues.events)")
        // Its own series: no gap is counted between transactional #1 and serial #1.
        #expect(b.issues.events.allSatisfy { if case .duplicateDropped(_, 1, false) = $0 { true } else { false } })
    }
}
