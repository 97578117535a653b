import ClusterSupport
import EventBusPostgres
import Logging
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("Transactional publish: sent at COMMIT, nothing on ROLLBACK")
    struct TransactionTests {

        @Test("a COMMIT delivers everywhere, the publisher included (from its echo), only after the COMMIT")
        func commitDelivers() async throws {
            try await PostgresBridgeTests.withPingPair { a, _, atA, atB in
                try await a.client.withTransaction(logger: Logger(label: "tests")) { connection in
                    try await a.bridge.publish(Ping(from: "a", n: 1), in: connection)
                    try await Task.sleep(for: .milliseconds(300))
                    // Not yet: neither locally nor remotely before the COMMIT.
                    #expect(atA.events.isEmpty)
                    #expect(atB.events.isEmpty)
                }
                #expect(await atA.wait(forCount: 1))
                #expect(await atB.wait(forCount: 1))
                try await a.bridge.publish(Ping(from: "a", n: 2))  // a marker, after the transaction's event
                #expect(await atB.wait(forCount: 2))
                try await Task.sleep(for: .milliseconds(200))
                #expect(atA.events == [Ping(from: "a", n: 1), Ping(from: "a", n: 2)])
                #expect(atB.events == [Ping(from: "a", n: 1), Ping(from: "a", n: 2)])
            }
        }

        @Test("a ROLLBACK delivers nothing, anywhere")
        func rollbackDeliversNothing() async throws {
            try await PostgresBridgeTests.withPingPair { a, _, atA, atB in
                await PostgresBridgeTests.publishRolledBack(Ping(from: "a", n: 1), from: a)
                // A marker sent after the rollback: once it arrived, the rolled-back event would have.
                try await a.client.withTransaction(logger: Logger(label: "tests")) { connection in
                    try await a.bridge.publish(Ping(from: "a", n: 2), in: connection)
                }
                #expect(await atA.wait(forCount: 1))
                #expect(await atB.wait(forCount: 1))
                try await Task.sleep(for: .milliseconds(200))
                #expect(atA.events == [Ping(from: "a", n: 2)])
                #expect(atB.events == [Ping(from: "a", n: 2)])
            }
        }

        @Test("two identical events in one transaction are both delivered (PostgreSQL does not fold them)")
        func identicalEventsBothDelivered() async throws {
            try await PostgresBridgeTests.withPingPair { a, _, atA, atB in
                try await a.client.withTransaction(logger: Logger(label: "tests")) { connection in
                    try await a.bridge.publish(Ping(from: "a", n: 7), in: connection)
                    try await a.bridge.publish(Ping(from: "a", n: 7), in: connection)
                }
                #expect(await atA.wait(forCount: 2))
                #expect(await atB.wait(forCount: 2))
                try await Task.sleep(for: .milliseconds(200))
                #expect(atA.events == [Ping(from: "a", n: 7), Ping(from: "a", n: 7)])
                #expect(atB.events == [Ping(from: "a", n: 7), Ping(from: "a", n: 7)])
            }
        }
    }
}

extension PostgresBridgeTests {
    @Suite("Own echoes from the durable store beyond the sent log")
    struct LateEchoTests {
        @Test(
            "durable: a transaction of 5,000 publishes is delivered locally once each after COMMIT, though the sent log keeps 4,096; no false forgery report"
        )
        func transactionBeyondSentLog() async throws {
            try await PostgresBridgeTests.withNodes(["a"], durable: true) { nodes in
                let node = nodes[0]
                let received = Recorder(Ping.self, on: node.bus)
                try await node.client.withTransaction(logger: Logger(label: "tests")) { connection in
                    for n in 1...5_000 { try await node.bridge.publish(Ping(from: "a", n: n), in: connection) }
                }
                #expect(await received.wait(forCount: 5_000, timeout: .seconds(60)))
                try await Task.sleep(for: .milliseconds(300))
                #expect(received.events.map(\.n) == Array(1...5_000), "each once, in order")
                #expect(node.issues.events.isEmpty, "\(node.issues.events.prefix(3))")
            }
        }
    }
}
