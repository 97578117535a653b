import ClusterSupport
import EventBusPostgres
import Foundation
import Testing

extension PostgresBridgeTests {
    @Suite("Integrity: forged NOTIFYs are refused with a key, and reported without one")
    struct IntegrityTests {
        @Test(
            "with a shared key, a NOTIFY forging an instance's next sequence is refused by all, and the real event is delivered"
        )
        func forgedNextSequenceWithKey() async throws {
            var settings = PostgresEventBridge.Configuration()
            settings.authenticationKey = Data(repeating: 7, count: 32)
            try await PostgresBridgeTests.withNodes(["a", "b"], configuration: settings) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let received = Recorder(Ping.self, on: b.bus)
                let forged =
                    #"{"v":3,"o":"\#(a.bridge.origin.uuidString)","s":1,"n":"test.ping.v1","ts":0,"p":{"from":"a","n":666}}"#
                try await PostgresBridgeTests.rawNotify(forged, on: a.bridge.channel)
                try await a.bridge.publish(Ping(from: "a", n: 1))
                #expect(await received.wait(forCount: 1))
                #expect(await a.issues.wait(forCount: 1))
                #expect(await b.issues.wait(forCount: 1))
                #expect(received.events == [Ping(from: "a", n: 1)])
                for node in [a, b] {
                    #expect(
                        node.issues.events.count == 1
                            && node.issues.events.allSatisfy {
                                if case .unauthenticated = $0 { true } else { false }
                            }, "\(node.issues.events)")
                }
            }
        }

        @Test(
            "without a key, a NOTIFY claiming another instance's origin is reported by it, and the real event it displaces by the receiver"
        )
        func crossOriginWithoutKey() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let received = Recorder(Ping.self, on: a.bus)
                let forged =
                    #"{"v":3,"o":"\#(b.bridge.origin.uuidString)","s":1,"n":"test.ping.v1","ts":0,"p":{"from":"b","n":666}}"#
                try await PostgresBridgeTests.rawNotify(forged, on: a.bridge.channel)
                try await b.bridge.publish(Ping(from: "b", n: 1))
                try await b.bridge.publish(Ping(from: "b", n: 2))
                #expect(await received.wait(forCount: 2))
                #expect(received.events.map(\.n) == [666, 2])
                #expect(await a.issues.wait(forCount: 1))
                #expect(await b.issues.wait(forCount: 1))
                #expect(
                    a.issues.events.map(\.description) == [
                        BridgeIssue.duplicateDropped(origin: b.bridge.origin, sequence: 1, conflicting: true)
                            .description
                    ])
                #expect(
                    b.issues.events.map(\.description) == [
                        BridgeIssue.claimsOwnOrigin(wireName: "test.ping.v1", sequence: 1).description
                    ])
            }
        }
    }
}
