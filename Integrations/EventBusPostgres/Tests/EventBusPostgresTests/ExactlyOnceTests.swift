import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("Effects exactly once: transactional handlers, dead letters, the chaos ledger")
    struct ExactlyOnceTests {
        static let logger = Logger(label: "tests")

        /// Creates a ledger table for `channel` (no unique constraint: a second effect is a second
        /// row; `tx` is the inserting transaction); returns its name.
        static func makeLedger(_ channel: String) async throws -> String {
            let table = "ledger_\(channel)"
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: "CREATE TABLE \(table) (n integer NOT NULL, tx xid8 DEFAULT pg_current_xact_id())"),
                    logger: logger
                ).consume()
            }
            return table
        }

        /// Inserts `n` into `table` on `connection` (a handler's effect).
        static func insert(_ n: Int, into table: String, on connection: PostgresConnection) async throws {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(n)
            try await connection.query(
                PostgresQuery(unsafeSQL: "INSERT INTO \(table) (n) VALUES ($1)", binds: bindings), logger: logger
            ).consume()
        }

        /// The ledger's rows: numbers in insert order, and the transaction of each.
        static func ledger(_ table: String) async throws -> [(n: Int, tx: String)] {
            try await PostgresBridgeTests.withConnection { connection in
                var rows: [(Int, String)] = []
                let query = PostgresQuery(unsafeSQL: "SELECT n, tx::text FROM \(table) ORDER BY tx, n")
                for try await (n, tx) in try await connection.query(query, logger: logger).decode((Int32, String).self)
                {
                    rows.append((Int(n), tx))
                }
                return rows
            }
        }

        /// Waits (`timeout` at most) until the ledger has `count` rows; returns its numbers, sorted.
        static func waitForLedger(_ table: String, count: Int, timeout: Duration = .seconds(20)) async throws -> [Int] {
            let deadline = ContinuousClock.now + timeout
            var numbers: [Int] = []
            while ContinuousClock.now < deadline {
                numbers = try await ledger(table).map(\.n).sorted()
                if numbers.count >= count { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            return numbers
        }

        /// A durable node of consumer `consumer` on `channel` (not started) with Ping registered and
        /// `handler` as its transactional handler of Pings.
        static func processingNode(
            _ consumer: String, channel: String,
            processing: PostgresEventBridge.Processing = PostgresEventBridge.Processing(),
            handler: @escaping @Sendable (Ping, PostgresConnection) async throws -> Void
        ) throws -> ClusterNode {
            var durable = PostgresEventBridge.Durable(consumer: consumer)
            durable.pollInterval = .milliseconds(200)
            durable.processing = processing
            var settings = PostgresEventBridge.Configuration()
            settings.delivery = .durable(durable)
            let node = try PostgresBridgeTests.durableNode(consumer, channel: channel, configuration: settings)
            node.bridge.register(Ping.self, as: "test.ping.v1")
            try node.bridge.process(Ping.self, handler)
            return node
        }

        /// A started durable publisher on `channel`.
        static func publisher(_ channel: String) async throws -> ClusterNode {
            let node = try PostgresBridgeTests.durableNode("publisher", channel: channel)
            node.bridge.register(Ping.self, as: "test.ping.v1")
            try await node.start()
            return node
        }

        /// Waits until `flag` is set, 10 s at most.
        static func waitFor(_ flag: NIOLockedValueBox<Bool>) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while !flag.withLockedValue({ $0 }) && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return flag.withLockedValue { $0 }
        }

        @Test("misuse: at most once refuses a transactional handler; a second handler for a type is refused")
        func refusals() throws {
            let atMostOnce = try ClusterNode(name: "refusals", url: PostgresBridgeTests.url, channel: "t_refusals")
            #expect(throws: PostgresEventBridgeError.self) {
                try atMostOnce.bridge.process(Ping.self) { _, _ in }
            }
            let durable = try PostgresBridgeTests.durableNode("refusals", channel: "t_refusals")
            try durable.bridge.process(Ping.self) { _, _ in }
            #expect(throws: PostgresEventBridgeError.self) {
                try durable.bridge.process(Ping.self) { _, _ in }
            }
        }

        @Test(
            "a handler's effect commits with the cursor: invisible and not on the bus while the transaction is open, then each event's effect once and each event on the bus once"
        )
        func effectsCommitWithTheCursor() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let table = try await Self.makeLedger(channel)
            let publisher = try await Self.publisher(channel)
            let inside = NIOLockedValueBox(false)
            let go = NIOLockedValueBox(false)
            let b = try Self.processingNode("b", channel: channel) { ping, connection in
                try await Self.insert(ping.n, into: table, on: connection)
                if ping.n == 10 {
                    inside.withLockedValue { $0 = true }
                    _ = await Self.waitFor(go)
                }
            }
            let onBus = Recorder(Ping.self, on: b.bus)
            try await b.start()
            try await publisher.client.withTransaction(logger: Self.logger) { connection in
                for n in 1...20 { try await publisher.bridge.publish(Ping(from: "p", n: n), in: connection) }
            }
            #expect(await Self.waitFor(inside))
            try await Task.sleep(for: .milliseconds(200))
            let visible = try await Self.ledger(table).count
            let dispatched = onBus.events.count
            go.withLockedValue { $0 = true }
            let numbers = try await Self.waitForLedger(table, count: 20)
            #expect(await onBus.wait(forCount: 20))
            try await Task.sleep(for: .milliseconds(300))  // room for a second effect or delivery
            #expect(visible == 0, "\(visible) effects visible before the COMMIT")
            #expect(dispatched == 0, "\(dispatched) events on the bus before the COMMIT")
            #expect(numbers == Array(1...20), "\(numbers)")
            #expect(try await Self.ledger(table).count == 20)
            #expect(onBus.events.map(\.n) == Array(1...20))
            #expect(Set(try await Self.ledger(table).map(\.tx)).count == 1, "one transaction for the batch")
            await b.stop()
            await publisher.stop()
        }

        @Test(
            "after a process died mid-batch: a consumer without handlers gets the batch again, announced (today's behaviour); one with handlers reruns nothing twice, one row per transaction through the dead claim, no redelivery"
        )
        func deadClaimWithAndWithoutHandlers() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let table = try await Self.makeLedger(channel)
            let publisher = try await Self.publisher(channel)
            // Both consumers exist, then stop having handled 1...5.
            let plain = try PostgresBridgeTests.durableNode("plain", channel: channel)
            plain.bridge.register(Ping.self, as: "test.ping.v1")
            let first = try Self.processingNode("ledger", channel: channel) { ping, connection in
                try await Self.insert(ping.n, into: table, on: connection)
            }
            try await plain.start()
            try await first.start()
            for n in 1...5 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            #expect(try await Self.waitForLedger(table, count: 5).count == 5)
            try await Task.sleep(for: .milliseconds(300))
            await plain.stop()
            await first.stop()
            for n in 6...15 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            // As a process killed after claiming 6...10 leaves both consumers.
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query(
                    """
                    UPDATE eventbus_cursors SET (claimed_xid, claimed_id) = (
                        SELECT xid, id FROM eventbus_outbox WHERE channel = \(channel) AND payload LIKE '%"n":10}%')
                    WHERE channel = \(channel) AND consumer IN ('plain', 'ledger')
                    """, logger: Self.logger
                ).consume()
            }
            let plainAgain = try PostgresBridgeTests.durableNode("plain", channel: channel)
            plainAgain.bridge.register(Ping.self, as: "test.ping.v1")
            let atPlain = Recorder(Ping.self, on: plainAgain.bus)
            let second = try Self.processingNode("ledger", channel: channel) { ping, connection in
                try await Self.insert(ping.n, into: table, on: connection)
            }
            let atLedger = Recorder(Ping.self, on: second.bus)
            try await plainAgain.start()
            try await second.start()
            let numbers = try await Self.waitForLedger(table, count: 15)
            #expect(await atPlain.wait(forCount: 10))
            #expect(await atLedger.wait(forCount: 10))
            try await Task.sleep(for: .milliseconds(300))
            #expect(numbers == Array(1...15), "\(numbers)")
            #expect(atLedger.events.map(\.n) == Array(6...15))
            #expect(atPlain.events.map(\.n) == Array(6...15))
            let announced = { (node: ClusterNode) in
                node.issues.events.compactMap { if case .redelivered(_, let count) = $0 { count } else { nil } }
            }
            #expect(announced(plainAgain) == [5], "the plain consumer announces its redelivery")
            #expect(announced(second).isEmpty, "no redelivery with handlers")
            // 6...10 (the dead claim) one per transaction, 11...15 together.
            let rows = try await Self.ledger(table).filter { $0.n > 5 }
            let transactions = Dictionary(grouping: rows, by: \.tx).values.map { $0.map(\.n).sorted() }
            #expect(
                transactions.sorted { $0[0] < $1[0] } == [[6], [7], [8], [9], [10], Array(11...15)], "\(transactions)")
            for node in [plainAgain, second, publisher] { await node.stop() }
        }

        @Test(
            "a handler that keeps throwing: tried maximumAttempts times, dead-lettered in the cursor's transaction, reported, the others go on; requeued, its effect happens once"
        )
        func retryDeadLetterAndRequeue() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let table = try await Self.makeLedger(channel)
            let publisher = try await Self.publisher(channel)
            struct Refused: Error {}
            let failing = NIOLockedValueBox(true)
            let calls = NIOLockedValueBox(0)
            var processing = PostgresEventBridge.Processing()
            processing.retryDelay = .milliseconds(10)
            let b = try Self.processingNode("b", channel: channel, processing: processing) { ping, connection in
                try await Self.insert(ping.n, into: table, on: connection)  // undone when it throws
                if ping.n % 3 == 0 && failing.withLockedValue({ $0 }) {
                    calls.withLockedValue { $0 += 1 }
                    throw Refused()
                }
            }
            let onBus = Recorder(Ping.self, on: b.bus)
            try await b.start()
            for n in 1...7 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            let numbers = try await Self.waitForLedger(table, count: 5)
            #expect(await onBus.wait(forCount: 7))
            #expect(numbers == [1, 2, 4, 5, 7], "\(numbers)")
            #expect(calls.withLockedValue { $0 } == 6, "3 tries for each of 3 and 6")
            let letters = try await b.bridge.deadLetters(consumer: "b")
            #expect(letters.count == 2)
            #expect(letters.allSatisfy { $0.attempts == 3 && $0.reason.contains("Refused") && $0.requeuedAt == nil })
            #expect(letters.map(\.wireName) == ["test.ping.v1", "test.ping.v1"])
            let page = try await b.bridge.deadLetters(consumer: "b", after: letters[0].id, limit: 1)
            #expect(page.map(\.id) == [letters[1].id])
            let reported = b.issues.events.compactMap { issue -> Int64? in
                if case .deadLettered("b", _, let letter, 3, _) = issue { letter } else { nil }
            }
            #expect(reported == letters.map(\.id), "each dead letter reported once: \(b.issues.events)")

            // Requeued one by one, then all: each effect once, and the letters gone.
            failing.withLockedValue { $0 = false }
            #expect(try await b.bridge.requeue(letters[0].id))
            #expect(try await Self.waitForLedger(table, count: 6) == [1, 2, 3, 4, 5, 7])
            #expect(try await b.bridge.requeueDeadLetters(of: "b") == 1)
            #expect(try await Self.waitForLedger(table, count: 7) == Array(1...7))
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await Self.ledger(table).count == 7)
            #expect(try await b.bridge.deadLetters(consumer: "b").isEmpty)
            #expect(try await b.bridge.requeue(letters[0].id) == false, "an unknown letter")
            #expect(onBus.events.count == 7, "requeued events are not dispatched again")
            await b.stop()
            await publisher.stop()
        }

        @Test(
            "in a consumer group: each partition's handlers run in the transaction that moves its cursor, its dead letters listed and requeued under the group's name"
        )
        func consumerGroup() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let table = try await Self.makeLedger(channel)
            let publisher = try await Self.publisher(channel)
            struct Refused: Error {}
            let failing = NIOLockedValueBox(true)
            var durable = PostgresEventBridge.Durable(consumer: "-")
            durable.group = PostgresEventBridge.ConsumerGroup(name: "g", partitions: 4)
            durable.pollInterval = .milliseconds(200)
            durable.processing.retryDelay = .milliseconds(10)
            var settings = PostgresEventBridge.Configuration()
            settings.delivery = .durable(durable)
            let member = try ClusterNode(
                name: "\(channel)_g", url: PostgresBridgeTests.url, channel: channel, configuration: settings)
            member.bridge.register(RoomMessage.self, as: "test.room-message.v1")
            try member.bridge.process(RoomMessage.self) { message, connection in
                let n = Int(message.text) ?? 0
                try await Self.insert(n, into: table, on: connection)
                if n == 3 && failing.withLockedValue({ $0 }) { throw Refused() }
            }
            publisher.bridge.register(RoomMessage.self, as: "test.room-message.v1")
            try await member.start()
            // Keys spread the events over the partitions.
            for n in 1...12 { try await publisher.bridge.publish(RoomMessage(room: "room-\(n % 5)", text: "\(n)")) }
            let numbers = try await Self.waitForLedger(table, count: 11)
            #expect(numbers == Array(1...12).filter { $0 != 3 }, "\(numbers)")
            let letters = try await member.bridge.deadLetters(consumer: "g")
            #expect(letters.count == 1 && letters.first?.consumer.hasPrefix("g#") == true, "\(letters)")
            failing.withLockedValue { $0 = false }
            #expect(try await member.bridge.requeueDeadLetters(of: "g") == 1)
            #expect(try await Self.waitForLedger(table, count: 12) == Array(1...12))
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await Self.ledger(table).count == 12)
            #expect(try await member.bridge.deadLetters(consumer: "g").isEmpty)
            let transactions = Set(try await Self.ledger(table).map(\.tx)).count
            print(
                "bridge: transactional handlers in a consumer group of 4 partitions: 12 effects once in "
                    + "\(transactions) transactions, 1 dead letter listed and requeued under the group's name")
            await member.stop()
            await publisher.stop()
        }

        @Test(
            "a member that lost its lease while its handler ran commits nothing; the next holder makes the effect once")
        func fencedMemberCommitsNothing() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let table = try await Self.makeLedger(channel)
            let publisher = try await Self.publisher(channel)
            let inside = NIOLockedValueBox(false)
            let go = NIOLockedValueBox(false)
            let b = try Self.processingNode("b", channel: channel) { ping, connection in
                try await Self.insert(ping.n, into: table, on: connection)
                inside.withLockedValue { $0 = true }
                _ = await Self.waitFor(go)
            }
            let onBus = Recorder(Ping.self, on: b.bus)
            try await b.start()
            let before = try await PostgresBridgeTests.DurableTests.cursorAndClaim("b", channel: channel)
            try await publisher.bridge.publish(Ping(from: "p", n: 1))
            #expect(await Self.waitFor(inside))
            // Another member takes the lease over (as after a stall past the lease).
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query(
                    """
                    UPDATE eventbus_cursors SET owner = gen_random_uuid(), lease_epoch = lease_epoch + 1,
                        lease_until = now() + interval '1 hour'
                    WHERE channel = \(channel) AND consumer = 'b'
                    """, logger: Self.logger
                ).consume()
            }
            go.withLockedValue { $0 = true }
            #expect(
                await b.statuses.wait { statuses in
                    statuses.contains { status in
                        guard case .interrupted(let error) = status,
                            case .leaseLost = error as? PostgresEventBridgeError
                        else { return false }
                        return true
                    }
                }, "\(b.statuses.events)")
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await Self.ledger(table).isEmpty, "the fenced member's effect committed")
            #expect(
                try await PostgresBridgeTests.DurableTests.cursorAndClaim("b", channel: channel).cursor == before.cursor
            )
            #expect(onBus.events.isEmpty)
            // The lease is free again: b takes it and makes the effect, once.
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query(
                    "UPDATE eventbus_cursors SET owner = NULL, lease_until = NULL WHERE channel = \(channel) AND consumer = 'b'",
                    logger: Self.logger
                ).consume()
            }
            #expect(try await Self.waitForLedger(table, count: 1) == [1])
            #expect(await onBus.wait(forCount: 1))
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await Self.ledger(table).count == 1)
            await b.stop()
            await publisher.stop()
        }

        @Test("the duration cap: slow handlers commit in several transactions, none much longer than the cap")
        func durationCap() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let table = try await Self.makeLedger(channel)
            let publisher = try await Self.publisher(channel)
            var processing = PostgresEventBridge.Processing()
            processing.maximumTransactionDuration = .milliseconds(150)
            let b = try Self.processingNode("b", channel: channel, processing: processing) { ping, connection in
                try await Task.sleep(for: .milliseconds(40))
                try await Self.insert(ping.n, into: table, on: connection)
            }
            try await b.start()
            try await publisher.client.withTransaction(logger: Self.logger) { connection in
                for n in 1...20 { try await publisher.bridge.publish(Ping(from: "p", n: n), in: connection) }
            }
            #expect(try await Self.waitForLedger(table, count: 20) == Array(1...20))
            let sizes = Dictionary(grouping: try await Self.ledger(table), by: \.tx).values.map(\.count)
            // 150 ms holds 4 handlers of 40 ms (the fourth ends past it): transactions of 4 or 5.
            #expect(sizes.count >= 4, "\(sizes.count) transactions: \(sizes)")
            #expect(sizes.allSatisfy { $0 <= 5 }, "\(sizes)")
            print("bridge: duration cap 150 ms, handlers of 40 ms: 20 events in \(sizes.count) transactions \(sizes)")
            await b.stop()
            await publisher.stop()
        }

        @Test(
            "a handler that hangs past its timeout every time: its transaction abandoned (connection replaced) and counted, dead-lettered after maximumAttempts, the others once each"
        )
        func hangingHandlerIsDeadLettered() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let table = try await Self.makeLedger(channel)
            let publisher = try await Self.publisher(channel)
            var processing = PostgresEventBridge.Processing()
            processing.handlerTimeout = .milliseconds(300)
            let b = try Self.processingNode("b", channel: channel, processing: processing) { ping, connection in
                if ping.n == 2 { try await Task.sleep(for: .seconds(5)) }
                try await Self.insert(ping.n, into: table, on: connection)
            }
            try await b.start()
            try await publisher.client.withTransaction(logger: Self.logger) { connection in
                for n in 1...4 { try await publisher.bridge.publish(Ping(from: "p", n: n), in: connection) }
            }
            let numbers = try await Self.waitForLedger(table, count: 3, timeout: .seconds(30))
            let letters = try await b.bridge.deadLetters(consumer: "b")
            #expect(numbers == [1, 3, 4], "\(numbers)")
            #expect(letters.count == 1 && letters.first?.attempts == 3, "\(letters)")
            let timeouts = b.statuses.events.filter { status in
                guard case .interrupted(let error) = status, case .handlerTimeout = error as? PostgresEventBridgeError
                else { return false }
                return true
            }
            #expect(!timeouts.isEmpty, "\(b.statuses.events)")
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await Self.ledger(table).count == 3)
            print("bridge: a handler that hangs (timeout 300 ms): dead-lettered, \(letters.first?.reason ?? "-")")
            await b.stop()
            await publisher.stop()
        }

        @Test(
            "a handler that kills its process (SIGKILL) every time: dead-lettered after maximumAttempts deaths without running again, the other events' effects once each; requeued, dead again the same way"
        )
        func poisonThatKillsTheProcess() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let table = try await Self.makeLedger(channel)
            let publisher = try await Self.publisher(channel)
            let environment = [
                "PEER_LEDGER": table, "PEER_POISON": "3", "PEER_LEASE_MS": "300", "PEER_FIRE_POLL_MS": "60000",
            ]
            var runs: [DurableTests.DurableReceiverProcess] = []
            var published = false
            var deadLettered = false
            while runs.count < 8 && !deadLettered {
                let peer = try DurableTests.DurableReceiverProcess(
                    channel: channel, consumer: "ledger", batch: 100, extra: environment)
                runs.append(peer)
                #expect(await peer.wait { $0.lines.contains("ready") }, "\(peer.lines)")
                if !published {
                    published = true
                    for n in 1...6 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
                }
                // Until it kills itself, or dead-letters the poison.
                _ = await peer.wait { $0.lines.contains { $0.hasPrefix("deadlettered") } }
                deadLettered = peer.lines.contains { $0.hasPrefix("deadlettered") }
                if deadLettered { _ = try await Self.waitForLedger(table, count: 5, timeout: .seconds(10)) }
                await peer.stop()
            }
            let poisoned = runs.reduce(0) { $0 + $1.lines.filter { $0.hasPrefix("poison") }.count }
            let numbers = try await Self.ledger(table).map(\.n).sorted()
            let letters = try await publisher.bridge.deadLetters(consumer: "ledger")
            #expect(deadLettered, "not dead-lettered after \(runs.count) runs")
            #expect(numbers == [1, 2, 4, 5, 6], "\(numbers)")
            #expect(letters.count == 1 && letters.first?.attempts == 3, "\(letters)")
            // Once in its batch (unless it was the batch's first row), then maximumAttempts (3) times alone.
            #expect((3...4).contains(poisoned), "the poison ran \(poisoned) times")

            // Requeued, it still kills the process: dead again after maximumAttempts deaths, never stuck.
            let letter = try #require(letters.first)
            #expect(try await publisher.bridge.requeue(letter.id))
            var again = 0
            var deadAgain = false
            while again < 6 && !deadAgain {
                again += 1
                let peer = try DurableTests.DurableReceiverProcess(
                    channel: channel, consumer: "ledger", batch: 100, extra: environment)
                _ = await peer.wait { $0.lines.contains { $0.hasPrefix("deadlettered") } }
                deadAgain = peer.lines.contains { $0.hasPrefix("deadlettered") }
                await peer.stop()
            }
            let after = try await publisher.bridge.deadLetters(consumer: "ledger")
            #expect(deadAgain, "not dead again after \(again) runs")
            #expect(after.count == 1 && after.first?.id == letter.id && after.first?.requeuedAt == nil, "\(after)")
            #expect(after.first?.attempts == 6 && after.first?.reason.contains("requeue") == true, "\(after)")
            #expect(try await Self.ledger(table).map(\.n).sorted() == [1, 2, 4, 5, 6])
            print(
                "bridge: a handler that kills its process: \(runs.count) process runs, the poison ran \(poisoned) "
                    + "times, then dead-lettered (\(letters.first?.reason ?? "-")); the 5 others once each; "
                    + "requeued, dead again after \(again) more runs")
            await publisher.stop()
        }

        @Test(
            "the chaos ledger: a receiver process killed (SIGKILL) at random points 20 times while 1,000 events are published, its handler inserting each into a ledger: 0 lost, 0 twice, 0 stuck"
        )
        func chaosLedger() async throws {
            let peer = try PostgresBridgeTests.CrossProcessTests.peerExecutable()
            let report = try await ChaosLedger(url: PostgresBridgeTests.url, peer: peer, events: 1_000, cycles: 20)
                .run()
            #expect(
                report.lost == 0 && report.twice == 0 && !report.stuck && report.deadLetters == 0, "\(report.summary)")
            #expect(report.kills == 20)
            print("bridge: chaos ledger: \(report.summary)")
        }
    }
}
