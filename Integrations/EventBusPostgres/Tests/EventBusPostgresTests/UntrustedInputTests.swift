import ClusterSupport
import EventBusPostgres
import Foundation
import Logging
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("Untrusted input: garbage NOTIFYs are reported and skipped, duplicates dropped")
    struct UntrustedInputTests {
        @Test(
            "foreign, malformed, oversized-nesting, unknown and undecodable payloads: each reported once, none delivered, the bridge carries on"
        )
        func garbage() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let received = Recorder(Ping.self, on: a.bus)
                let stranger = UUID().uuidString
                let notEnvelopes = [
                    "junk",
                    "",
                    "{}",
                    "null",
                    #"{"v":5,"o":"\#(stranger)","s":1,"n":"test.ping.v1","ts":0,"p":{"from":"x","n":1}}"#,
                    #"{"v":3,"o":"not-a-uuid","s":1,"n":"test.ping.v1","p":{"from":"x","n":1}}"#,
                    #"{"v":3,"o":"\#(stranger)","n":"test.ping.v1","p":{"from":"x","n":1}}"#,
                    #"{"v":3,"o":"\#(stranger)","s":-1,"n":"test.ping.v1","p":{"from":"x","n":1}}"#,
                    #"{"v":3,"o":"\#(stranger)","s":1e400,"n":"test.ping.v1","p":{}}"#,
                    String(repeating: "[", count: 3_900) + String(repeating: "]", count: 3_900),
                    #"{"v":3,"o":"\#(stranger)","s":1,"n":"test.ping.v1","p":"#
                        + String(repeating: "[", count: 3_000) + String(repeating: "]", count: 3_000) + "}",
                ]
                for payload in notEnvelopes { try await PostgresBridgeTests.rawNotify(payload, on: a.bridge.channel) }
                // Well-formed, but for a name nobody registered, and a registered name with a bad payload.
                try await PostgresBridgeTests.rawNotify(
                    #"{"v":3,"o":"\#(stranger)","s":2,"n":"nobody.v1","ts":0,"p":{}}"#, on: a.bridge.channel)
                try await PostgresBridgeTests.rawNotify(
                    #"{"v":3,"o":"\#(stranger)","s":3,"n":"test.ping.v1","ts":0,"p":{"from":7}}"#, on: a.bridge.channel)
                // Then a real event: still delivered.
                try await b.bridge.publish(Ping(from: "b", n: 1))
                #expect(await received.wait(forCount: 1))
                #expect(await a.issues.wait(forCount: notEnvelopes.count + 2))
                try await Task.sleep(for: .milliseconds(200))
                #expect(received.events == [Ping(from: "b", n: 1)])
                let issues = a.issues.events
                #expect(issues.count == notEnvelopes.count + 2, "\(issues)")
                let undecodable = issues.filter { if case .undecodableNotification = $0 { true } else { false } }
                #expect(undecodable.count == notEnvelopes.count, "\(issues)")
                #expect(
                    issues.contains { if case .unknownWireName("nobody.v1", _) = $0 { true } else { false } })
                #expect(
                    issues.contains {
                        if case .undecodablePayload("test.ping.v1", _, _) = $0 { true } else { false }
                    })
                #expect(a.statuses.events.count == 1, "no reconnection: \(a.statuses.events)")
            }
        }

        @Test("a NOTIFY from psql's syntax (NOTIFY channel, 'junk') is reported and skipped")
        func plainNotify() async throws {
            try await PostgresBridgeTests.withNodes(["a"]) { nodes in
                let a = nodes[0]
                try await PostgresBridgeTests.withConnection { connection in
                    try await connection.query(
                        .init(unsafeSQL: "NOTIFY \(a.bridge.channel), 'junk'"), logger: .init(label: "tests"))
                }
                #expect(await a.issues.wait(forCount: 1))
                if case .undecodableNotification(_, let bytes, let excerpt) = a.issues.events.first {
                    #expect(bytes == 4 && excerpt == "junk")
                } else {
                    Issue.record("expected undecodableNotification, got \(a.issues.events)")
                }
            }
        }

        @Test(
            "the same (origin, sequence) twice is delivered once and each repeat reported; the next sequence is delivered"
        )
        func duplicatesDropped() async throws {
            try await PostgresBridgeTests.withNodes(["a"]) { nodes in
                let a = nodes[0]
                let received = Recorder(Ping.self, on: a.bus)
                let stranger = UUID().uuidString
                func envelope(_ sequence: Int) -> String {
                    #"{"v":3,"o":"\#(stranger)","s":\#(sequence),"n":"test.ping.v1","ts":0,"p":{"from":"s","n":\#(sequence)}}"#
                }
                for sequence in [7, 7, 8, 7] {
                    try await PostgresBridgeTests.rawNotify(envelope(sequence), on: a.bridge.channel)
                }
                #expect(await received.wait(forCount: 2))
                try await Task.sleep(for: .milliseconds(300))
                #expect(received.events.map(\.n) == [7, 8])
                #expect(await a.issues.wait(forCount: 2))
                #expect(
                    a.issues.events.map(\.description)
                        == [7, 7].map {
                            BridgeIssue.duplicateDropped(
                                origin: UUID(uuidString: stranger)!, sequence: $0, conflicting: false
                            )
                            .description
                        })
            }
        }
    }
}
