import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("The outbox's order: a batch is read in (xid, id) order, whatever the xids' digits")
    struct OutboxOrderTests {
        /// Makes the server's next transaction ids cross a power of ten a few transactions from now
        /// (subtransactions of one DO block, about 4 µs each): in text order "1000" sorts before
        /// "999", which is how a batch whose ORDER BY named its `xid::text` output column was read.
        static func approachDigitBoundary() async throws -> UInt64 {
            try await PostgresBridgeTests.withConnection { connection in
                var current: UInt64 = 0
                let logger = Logger(label: "tests")
                for try await text in try await connection.query(
                    "SELECT pg_current_xact_id()::text", logger: logger
                ).decode(String.self) {
                    current = UInt64(text) ?? 0
                }
                var boundary: UInt64 = 10
                while boundary <= current + 20 { boundary *= 10 }
                let burn = Int(boundary - current - 10)
                try await connection.query("CREATE TEMPORARY TABLE xid_burn (n int)", logger: logger).consume()
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            DO $$ BEGIN FOR i IN 1..\(burn) LOOP
                                BEGIN INSERT INTO xid_burn VALUES (i); EXCEPTION WHEN others THEN NULL; END;
                            END LOOP; END $$
                            """), logger: logger
                ).consume()
                return boundary
            }
        }

        @Test(
            "a batch whose rows' transaction ids cross a power of ten (999 → 1000) is delivered in publish order, no gap reported"
        )
        func batchAcrossDigitBoundaryInOrder() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            try await PostgresBridgeTests.withNodes(["publisher"], durable: true, channel: channel) { nodes in
                // Create the reader's cursor, then stop it: the rows come in one batch when it restarts.
                let first = try PostgresBridgeTests.durableNode("reader", channel: channel)
                try await first.start()
                await first.stop()
                let boundary = try await Self.approachDigitBoundary()
                for n in 1...40 { try await nodes[0].bridge.publish(Ping(from: "p", n: n)) }
                let reader = try PostgresBridgeTests.durableNode("reader", channel: channel)
                reader.bridge.register(Ping.self, as: "test.ping.v1")
                let received = Recorder(Ping.self, on: reader.bus)
                try await reader.start()
                #expect(await received.wait(forCount: 40, timeout: .seconds(20)))
                try await Task.sleep(for: .milliseconds(200))
                #expect(received.events.map(\.n) == Array(1...40), "in order across xid \(boundary)")
                // Only gaps count here: the first node, stopped right after it started, may still
                // hold the lease as the second starts (a `standingBy` report, then it lapses).
                let gaps = reader.issues.events.filter { issue in
                    switch issue {
                    case .missed, .missedUncounted, .olderThanWindow: true
                    default: false
                    }
                }
                #expect(gaps.isEmpty, "no false gap: \(reader.issues.events)")
                await reader.stop()
            }
        }
    }
}
