import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import Logging
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("Durable order across a power of ten of transaction ids")
    struct TransactionIDOrderTests {
        @Test(
            "a batch whose rows' transaction ids cross a power of ten (9…9 to 10…0) is delivered in order, with nothing reported missed or dropped"
        )
        func batchAcrossADigitBoundary() async throws {
            let logger = Logger(label: "tests")
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try PostgresBridgeTests.durableNode("publisher", channel: channel)
            publisher.bridge.register(Ping.self, as: "test.ping.v1")
            try await publisher.start()
            // The receiver's cursor exists; it is stopped while the events are published, so that
            // it reads them in one batch.
            let first = try PostgresBridgeTests.durableNode("b", channel: channel)
            first.bridge.register(Ping.self, as: "test.ping.v1")
            try await first.start()
            await first.stop()
            // Transaction ids up to a few below the next power of ten (a procedure that commits
            // each one: fast, server-side).
            try await PostgresBridgeTests.withConnection { connection in
                var current: Int64 = 0
                for try await value in try await connection.query(
                    "SELECT pg_current_xact_id()::text::bigint", logger: logger
                ).decode(Int64.self) {
                    current = value
                }
                var boundary: Int64 = 10
                while boundary <= current + 10 { boundary *= 10 }
                try await connection.query(
                    """
                    CREATE OR REPLACE PROCEDURE eventbus_test_burn_xids(n bigint) LANGUAGE plpgsql AS $$
                    BEGIN FOR i IN 1..n LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$
                    """, logger: logger
                ).consume()
                try await connection.query("CALL eventbus_test_burn_xids(\(boundary - current - 4))", logger: logger)
                    .consume()
            }
            for n in 1...12 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            let span = try await PostgresBridgeTests.withConnection { connection in
                var span = ("", "")
                let query: PostgresQuery =
                    "SELECT min(xid)::text, max(xid)::text FROM eventbus_outbox WHERE channel = \(channel)"
                for try await row in try await connection.query(query, logger: logger).decode((String, String).self) {
                    span = row
                }
                return span
            }
            #expect(span.0.count < span.1.count, "the rows do not cross a power of ten: \(span)")
            let b = try PostgresBridgeTests.durableNode("b", channel: channel)
            b.bridge.register(Ping.self, as: "test.ping.v1")
            let received = Recorder(Ping.self, on: b.bus)
            try await b.start()
            #expect(await received.wait(forCount: 12))
            try await Task.sleep(for: .milliseconds(300))
            #expect(received.events.map(\.n) == Array(1...12), "transaction ids \(span): \(received.events.map(\.n))")
            let unexpected = b.issues.events.filter { if case .standingBy = $0 { false } else { true } }
            #expect(unexpected.isEmpty, "\(unexpected)")
            await b.stop()
            await publisher.stop()
        }
    }
}
