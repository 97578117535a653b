import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import Logging
import PostgresNIO
import Testing

extension PostgresBridgeTests.DurableTests {
    /// The transaction id the next transaction will get, about (this one's, plus one).
    static func nextTransactionID() async throws -> UInt64 {
        try await PostgresBridgeTests.withConnection { connection in
            var xid: UInt64 = 0
            let query: PostgresQuery = "SELECT pg_current_xact_id()::text"
            for try await text in try await connection.query(query, logger: Logger(label: "tests")).decode(String.self)
            {
                xid = UInt64(text) ?? 0
            }
            return xid + 1
        }
    }

    @Test(
        "a batch whose rows' transaction ids cross a power of ten (…9998, …9999, 10000…) is delivered in (xid, id) order, not in the text order of xid"
    )
    func orderAcrossTransactionIDDigits() async throws {
        let channel = PostgresBridgeTests.uniqueChannel()
        let publisher = try PostgresBridgeTests.durableNode("publisher", channel: channel)
        let reader = try PostgresBridgeTests.durableNode("reader", channel: channel)
        for node in [publisher, reader] { node.bridge.register(Ping.self, as: "test.ping.v1") }
        try await publisher.start()
        try await reader.start()
        await reader.stop()  // its cursor is before what follows: it reads all of it in one batch
        // Use transaction ids up to a little before the next power of ten: one transaction of
        // subtransactions, each of which writes (so takes an id).
        var next = try await Self.nextTransactionID()
        var power: UInt64 = 10
        while power <= next + 10 { power *= 10 }
        let burn = Int(power - next) - 10
        try await PostgresBridgeTests.withConnection { connection in
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        DO $$ BEGIN
                            CREATE TEMP TABLE burn (i int);
                            FOR i IN 1..\(burn) LOOP
                                BEGIN INSERT INTO burn VALUES (i); EXCEPTION WHEN division_by_zero THEN NULL; END;
                            END LOOP;
                        END $$
                        """), logger: Logger(label: "tests")
            ).consume()
        }
        next = try await Self.nextTransactionID()
        for n in 1...30 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
        let xids = try await PostgresBridgeTests.withConnection { connection in
            var xids: [UInt64] = []
            let query: PostgresQuery = "SELECT xid::text FROM eventbus_outbox WHERE channel = \(channel) ORDER BY id"
            for try await text in try await connection.query(query, logger: Logger(label: "tests")).decode(String.self)
            {
                xids.append(UInt64(text) ?? 0)
            }
            return xids
        }
        try #require(
            xids.contains { $0 < power } && xids.contains { $0 >= power },
            "the rows straddle \(power): \(xids.first ?? 0)…\(xids.last ?? 0), from \(next)")
        let restarted = try PostgresBridgeTests.durableNode("reader", channel: channel)
        restarted.bridge.register(Ping.self, as: "test.ping.v1")
        let received = Recorder(Ping.self, on: restarted.bus)
        try await restarted.start()
        #expect(await received.wait(forCount: 30))
        #expect(received.events.map(\.n) == Array(1...30), "in order across xid \(power)")
        let ordered = received.events.map(\.n) == Array(1...30)
        print(
            "bridge: durable order across transaction id \(power): \(received.events.count) events, "
                + (ordered ? "in order" : "OUT OF ORDER"))
        for node in [restarted, publisher] { await node.stop() }
    }
}
