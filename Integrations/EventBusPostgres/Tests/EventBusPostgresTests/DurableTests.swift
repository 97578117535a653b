import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("Durable delivery: an outbox, a cursor per consumer, nothing lost or repeated")
    struct DurableTests {

        /// Each node's pings, received by the other, checked against what it published: none
        /// twice, every one whose publish returned delivered, none that was never published.
        /// Returns one line of figures per origin.
        static func checkExactlyOnce(
            _ nodes: [ClusterNode], received: [Recorder<Ping>], attempted: [Int], succeeded: [Set<Int>]
        ) -> [String] {
            var lines: [String] = []
            for (index, node) in nodes.enumerated() {
                let receiver = 1 - index
                let numbers = received[receiver].events.filter { $0.from == node.name }.map(\.n)
                let delivered = Set(numbers)
                let lost = succeeded[index].subtracting(delivered)
                #expect(numbers.count == delivered.count, "\(node.name)'s events delivered twice")
                #expect(lost.isEmpty, "\(node.name): \(lost.count) published events lost: \(lost.sorted().prefix(10))")
                #expect(delivered.allSatisfy { (1...attempted[index]).contains($0) })
                #expect(numbers == numbers.sorted(), "\(node.name)'s events out of order")
                lines.append(
                    "\(node.name) \(attempted[index]) published (\(succeeded[index].count) confirmed), "
                        + "\(delivered.count) delivered, \(lost.count) lost, \(numbers.count - delivered.count) twice")
            }
            return lines
        }

        @Test("a COMMIT delivers everywhere, the publisher included, from the outbox; a ROLLBACK nowhere")
        func transactions() async throws {
            try await PostgresBridgeTests.withPingPair(durable: true) { a, _, atA, atB in
                await PostgresBridgeTests.publishRolledBack(Ping(from: "a", n: 1), from: a)
                try await a.client.withTransaction(logger: Logger(label: "tests")) { connection in
                    try await a.bridge.publish(Ping(from: "a", n: 2), in: connection)
                    try await Task.sleep(for: .milliseconds(300))
                    #expect(atA.events.isEmpty && atB.events.isEmpty, "delivered before the COMMIT")
                }
                try await a.bridge.publish(Ping(from: "a", n: 3))  // a marker, after the transactions
                #expect(await atB.wait(forCount: 2))
                #expect(await atA.wait(forCount: 2))
                try await Task.sleep(for: .milliseconds(300))
                #expect(atA.events.map(\.n) == [2, 3] || atA.events.map(\.n) == [3, 2], "\(atA.events)")
                #expect(atB.events.map(\.n) == [2, 3], "\(atB.events)")
                let rows = try await PostgresBridgeTests.withConnection { connection in
                    var count = 0
                    let query: PostgresQuery =
                        "SELECT count(*) FROM eventbus_outbox WHERE channel = \(a.bridge.channel)"
                    for try await value in try await connection.query(query, logger: Logger(label: "tests"))
                        .decode(Int64.self)
                    {
                        count = Int(value)
                    }
                    return count
                }
                #expect(rows == 2, "the rolled-back row is not in the outbox")
            }
        }

        @Test("kill -9 of the server mid-stream, two durable instances: per origin 0 lost, 0 delivered twice, in order")
        func killMidStream() async throws {
            var settings = PostgresEventBridge.Configuration()
            settings.publishTimeout = .seconds(2)
            try await PostgresBridgeTests.withNodes(["a", "b"], configuration: settings, durable: true) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let received = [Recorder(Ping.self, on: a.bus), Recorder(Ping.self, on: b.bus)]
                let stream = PingStream([a, b])
                let (attempted, succeeded) = (stream.attempted, stream.succeeded)
                try await Task.sleep(for: .milliseconds(500))
                #expect(try await PostgresBridgeTests.serverCommand("EVENTBUS_POSTGRES_KILL"))
                try await Task.sleep(for: .milliseconds(1500))
                #expect(try await PostgresBridgeTests.serverCommand("EVENTBUS_POSTGRES_START"))
                // Until each has confirmed 100 publishes after the restart.
                let before = succeeded.withLockedValue { $0.map(\.count) }
                let deadline = ContinuousClock.now + .seconds(30)
                while succeeded.withLockedValue({ zip($0, before).contains { $0.count < $1 + 100 } })
                    && ContinuousClock.now < deadline
                {
                    try await Task.sleep(for: .milliseconds(20))
                }
                await stream.stop()
                let confirmed = succeeded.withLockedValue { $0 }
                for (index, node) in [a, b].enumerated() {
                    let last = try #require(confirmed[index].max())
                    #expect(
                        await received[1 - index].wait(timeout: .seconds(30)) {
                            $0.contains(Ping(from: node.name, n: last))
                        }, "\(node.name)'s last event did not arrive")
                }
                try await Task.sleep(for: .milliseconds(500))  // room for a duplicate to show up
                let lines = Self.checkExactlyOnce(
                    [a, b], received: received, attempted: attempted.withLockedValue { $0 }, succeeded: confirmed)
                // The only gaps: publishes that failed while the server was down and never reached
                // the outbox (their sequence numbers were taken), each counted.
                let counts = attempted.withLockedValue { $0 }
                for (index, node) in [a, b].enumerated() {
                    let receiver = [b, a][index]
                    let delivered = received[1 - index].events.filter { $0.from == node.name }.count
                    let missed = receiver.issues.events.reduce(0) { sum, issue in
                        if case .missed(node.bridge.origin, let count, _) = issue { return sum + Int(count) }
                        return sum
                    }
                    #expect(delivered + missed == counts[index], "\(delivered) delivered + \(missed) missed")
                    let unexpected = receiver.issues.events.filter {
                        switch $0 {
                        case .missedUncounted, .duplicateDropped, .redelivered, .expired, .olderThanWindow: true
                        default: false
                        }
                    }
                    #expect(unexpected.isEmpty, "\(receiver.name) reported \(unexpected)")
                }
                print("bridge: durable, kill -9 mid-stream: \(lines.joined(separator: "; "))")
            }
        }

        @Test(
            "cleanup deletes only what every cursor passed, then what exceeds the retention bound (reported to the consumer that lost it), while a publisher goes on"
        )
        func retention() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let junk = 20_000
            try await PostgresBridgeTests.withConnection { connection in
                for statement in PostgresEventBridge.durableSchema {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Logger(label: "tests"))
                        .consume()
                }
                // Rows older than every consumer (consumers start after the last row).
                try await connection.query(
                    "INSERT INTO eventbus_outbox (channel, payload) SELECT \(channel), 'x' FROM generate_series(1, \(junk))",
                    logger: Logger(label: "tests")
                ).consume()
            }
            var settings = PostgresEventBridge.Configuration()
            var durable = PostgresEventBridge.Durable(consumer: "-")
            durable.cleanupInterval = .seconds(3600)  // only the test cleans
            durable.pollInterval = .milliseconds(200)
            settings.delivery = .durable(durable)
            try await PostgresBridgeTests.withNodes(["a"], configuration: settings, durable: true, channel: channel) {
                nodes in
                let a = nodes[0]
                var b: ClusterNode? = try PostgresBridgeTests.durableNode(
                    "b", channel: channel, configuration: settings)
                b?.bridge.register(Ping.self, as: "test.ping.v1")
                try await b?.start()
                let atB = Recorder(Ping.self, on: try #require(b).bus)
                for n in 1...100 { try await a.bridge.publish(Ping(from: "a", n: n)) }
                #expect(await atB.wait(forCount: 100))
                try await Task.sleep(for: .milliseconds(300))  // b acknowledges its last batch
                await b?.stop()
                b = nil
                for n in 101...200 { try await a.bridge.publish(Ping(from: "a", n: n)) }
                // a passes its own events (delivered locally at publish time) too.
                #expect(await Self.waitForCursor("a", channel: channel, atRowCount: junk + 200))

                // Cleanup with a publisher beside it: only rows both cursors passed go.
                let cleaning = NIOLockedValueBox(true)
                let duringCleanup = NIOLockedValueBox(0)
                let publisher = Task {
                    var n = 200
                    while cleaning.withLockedValue({ $0 }) {
                        n += 1
                        try await a.bridge.publish(Ping(from: "a", n: n))
                        if cleaning.withLockedValue({ $0 }) { duringCleanup.withLockedValue { $0 += 1 } }
                    }
                    return n
                }
                let started = ContinuousClock.now
                let deleted = try await a.bridge.cleanUpOutbox()
                let took = started.duration(to: .now)
                cleaning.withLockedValue { $0 = false }
                let lastPublished = try await publisher.value
                #expect(deleted == junk + 100, "deleted \(deleted): the rows b has not read must stay")
                #expect(duringCleanup.withLockedValue { $0 } > 0, "no publish completed during the cleanup")
                let remaining = try await Self.rowCount(channel)
                #expect(remaining == lastPublished - 100)

                // A bound of 30 rows: the older ones go although b has not read them.
                let cleaner = try PostgresBridgeTests.cleaner(channel: channel, configuration: settings, keeping: 30)
                try await cleaner.start()
                let expired = try await cleaner.bridge.cleanUpOutbox()
                await cleaner.stop()
                #expect(expired == remaining - 30)
                #expect(try await Self.rowCount(channel) == 30)

                // b comes back: it gets the 30 left, in order, and reports the rest as expired.
                let again = try PostgresBridgeTests.durableNode("b", channel: channel, configuration: settings)
                again.bridge.register(Ping.self, as: "test.ping.v1")
                let atB2 = Recorder(Ping.self, on: again.bus)
                try await again.start()
                #expect(await atB2.wait(forCount: 30))
                #expect(atB2.events.map(\.n) == Array((lastPublished - 29)...lastPublished))
                #expect(
                    await again.issues.wait(timeout: .seconds(5)) { issues in
                        issues.contains { if case .expired("b", expired) = $0 { true } else { false } }
                    }, "\(again.issues.events)")
                await again.stop()
                print(
                    "bridge: durable cleanup: \(deleted) rows every cursor passed deleted in "
                        + "\(ServerKillTests.seconds(took)), \(duringCleanup.withLockedValue { $0 }) publishes completed "
                        + "meanwhile, \(remaining) kept; a bound of 30 deleted \(expired), "
                        + "reported expired to b")
            }
        }

        /// The channel's rows in the outbox.
        static func rowCount(_ channel: String) async throws -> Int {
            try await PostgresBridgeTests.withConnection { connection in
                var count = 0
                let query: PostgresQuery = "SELECT count(*) FROM eventbus_outbox WHERE channel = \(channel)"
                for try await value in try await connection.query(query, logger: Logger(label: "tests"))
                    .decode(Int64.self)
                {
                    count = Int(value)
                }
                return count
            }
        }

        /// Waits (10 s at most) until consumer `consumer`'s cursor is at the row `count` of the
        /// channel in the outbox's order.
        static func waitForCursor(_ consumer: String, channel: String, atRowCount count: Int) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let passed = try? await PostgresBridgeTests.withConnection { connection in
                    var passed = 0
                    let query: PostgresQuery = """
                        SELECT count(*) FROM eventbus_outbox o, eventbus_cursors c
                        WHERE o.channel = \(channel) AND c.channel = \(channel) AND c.consumer = \(consumer)
                            AND (o.xid, o.id) <= (c.xid, c.id)
                        """
                    for try await value in try await connection.query(query, logger: Logger(label: "tests"))
                        .decode(Int64.self)
                    {
                        passed = Int(value)
                    }
                    return passed
                }
                if passed == count { return true }
                try? await Task.sleep(for: .milliseconds(50))
            }
            return false
        }
    }
}

extension PostgresRowSequence {
    /// Reads the rows to the end.
    func consume() async throws {
        for try await _ in self {}
    }
}

extension PostgresBridgeTests.DurableTests {
    /// A ClusterPeer process consuming durably, and what it said.
    final class DurableReceiverProcess: Sendable {
        let process = Process()
        private let output = NIOLockedValueBox("")
        private let pipe = Pipe()

        /// `extra`: more of the peer's environment variables (its scheduled-event firer's settings).
        init(
            channel: String, consumer: String, batch: Int, delayMilliseconds: Int = 0, extra: [String: String] = [:]
        ) throws {
            let output = self.output
            pipe.fileHandleForReading.readabilityHandler = { handle in
                let text = String(decoding: handle.availableData, as: UTF8.self)
                output.withLockedValue { $0 += text }
            }
            process.executableURL = try PostgresBridgeTests.CrossProcessTests.peerExecutable()
            var environment = ProcessInfo.processInfo.environment
            environment["PEER_CHANNEL"] = channel
            environment["PEER_CONSUMER"] = consumer
            environment["PEER_BATCH"] = String(batch)
            environment["PEER_DELAY_MS"] = String(delayMilliseconds)
            environment.merge(extra) { _, new in new }
            process.environment = environment
            process.standardOutput = pipe
            try process.run()
        }

        var lines: [Substring] { output.withLockedValue { $0 }.split(separator: "\n") }

        /// The numbers of the pings from `from` its handlers ran, in order.
        func numbers(from: String) -> [Int] {
            lines.compactMap { line in
                let words = line.split(separator: " ")
                return words.count == 3 && words[0] == "got" && words[1] == from ? Int(words[2]) : nil
            }
        }

        /// The events it reported as delivered again.
        var redelivered: Int {
            lines.reduce(0) { sum, line in
                line.hasPrefix("redelivered ") ? sum + (Int(line.dropFirst("redelivered ".count)) ?? 0) : sum
            }
        }

        /// The events it reported as deleted by retention before it read them.
        var expired: Int {
            lines.reduce(0) { sum, line in
                line.hasPrefix("expired ") ? sum + (Int(line.dropFirst("expired ".count)) ?? 0) : sum
            }
        }

        /// Waits (60 s at most) until `condition` holds for it; returns whether it does.
        func wait(until condition: (DurableReceiverProcess) -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(60)
            while !condition(self) {
                if !process.isRunning || ContinuousClock.now >= deadline { return false }
                try? await Task.sleep(for: .milliseconds(10))
            }
            return true
        }

        /// Kills it with `signal` (SIGKILL: no cleanup of any kind), waits (10 s at most) until it
        /// has exited, and stops reading its output (a handler left on the pipe can keep the test
        /// process from exiting).
        func stop(_ signal: Int32 = SIGKILL) async {
            if process.isRunning { kill(process.processIdentifier, signal) }
            let deadline = ContinuousClock.now + .seconds(10)
            while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
            pipe.fileHandleForReading.readabilityHandler = nil
            try? pipe.fileHandleForReading.close()
        }
    }

    @Test(
        "a receiver process killed (kill -9) mid-stream and restarted under the same consumer name resumes from its cursor: none lost, a repeat only within the batch it reports"
    )
    func receiverProcessRestart() async throws {
        try await PostgresBridgeTests.withNodes(["local"], durable: true) { nodes in
            let local = nodes[0]
            let channel = local.bridge.channel
            let total = 600
            let first = try DurableReceiverProcess(channel: channel, consumer: "peer", batch: 20)
            #expect(await first.wait { $0.lines.contains("ready") }, "\(first.lines)")
            let publisher = Task {
                for n in 1...total {
                    try await local.bridge.publish(Ping(from: "local", n: n))
                    try await Task.sleep(for: .milliseconds(2))
                }
            }
            #expect(await first.wait { $0.numbers(from: "local").count >= 150 })
            await first.stop()
            let second = try DurableReceiverProcess(channel: channel, consumer: "peer", batch: 20)
            try await publisher.value
            let complete = await second.wait { $0.numbers(from: "local").contains(total) }
            try await Task.sleep(for: .milliseconds(300))  // room for a duplicate to show up
            await second.stop(SIGTERM)
            #expect(complete, "\(second.lines.suffix(5))")
            let before = first.numbers(from: "local")
            let after = second.numbers(from: "local")
            let repeated = Set(before).intersection(after)
            #expect(
                Set(before).union(after) == Set(1...total),
                "lost: \(Set(1...total).subtracting(before + after).sorted())")
            #expect(before == Array(1...before.count), "first run out of order or twice")
            #expect(after == after.sorted() && Set(after).count == after.count, "second run out of order or twice")
            #expect(repeated.count <= second.redelivered, "\(repeated.count) repeated, \(second.redelivered) reported")
            #expect(second.redelivered <= 20, "more than a batch redelivered")
            print(
                "bridge: durable receiver killed after \(before.count) of \(total), restarted: \(after.count) more, "
                    + "0 lost, \(repeated.count) repeated (\(second.redelivered) reported as redelivered)")
        }
    }
}

extension PostgresBridgeTests.DurableTests {
    @Test(
        "a consumer whose predecessor handed a batch to the bus without acknowledging it gets that batch again, reported just before it, and nothing else twice"
    )
    func unacknowledgedBatchIsRedelivered() async throws {
        let channel = PostgresBridgeTests.uniqueChannel()
        try await PostgresBridgeTests.withNodes(["a"], durable: true, channel: channel) { nodes in
            let a = nodes[0]
            let first = try PostgresBridgeTests.durableNode("b", channel: channel)
            first.bridge.register(Ping.self, as: "test.ping.v1")
            let atFirst = Recorder(Ping.self, on: first.bus)
            try await first.start()
            for n in 1...5 { try await a.bridge.publish(Ping(from: "a", n: n)) }
            #expect(await atFirst.wait(forCount: 5))
            try await Task.sleep(for: .milliseconds(300))  // the batch is acknowledged
            await first.stop()
            for n in 6...15 { try await a.bridge.publish(Ping(from: "a", n: n)) }
            // As a process killed after handing 6...10 to its bus, before acknowledging them, leaves it.
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query(
                    """
                    UPDATE eventbus_cursors SET (claimed_xid, claimed_id) = (
                        SELECT xid, id FROM eventbus_outbox WHERE channel = \(channel) AND payload LIKE '%"n":10}%')
                    WHERE channel = \(channel) AND consumer = 'b'
                    """, logger: Logger(label: "tests")
                ).consume()
            }
            let second = try PostgresBridgeTests.durableNode("b", channel: channel)
            second.bridge.register(Ping.self, as: "test.ping.v1")
            let seen = NIOLockedValueBox<[String]>([])
            let pings = second.bus.on(Ping.self).next { ping in seen.withLockedValue { $0.append("\(ping.n)") } }
            let issues = second.bus.on(BridgeIssue.self).next { issue in
                if case .redelivered(let consumer, let count) = issue {
                    seen.withLockedValue { $0.append("redelivered \(consumer) \(count)") }
                }
            }
            defer {
                pings.dispose()
                issues.dispose()
            }
            try await second.start()
            let deadline = ContinuousClock.now + .seconds(10)
            while seen.withLockedValue({ $0.count < 11 }) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(200))
            await second.stop()
            #expect(seen.withLockedValue { $0 } == ["redelivered b 5"] + (6...15).map { "\($0)" })
        }
    }
}
