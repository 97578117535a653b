import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import Logging
import PostgresNIO
import Testing

extension PostgresBridgeTests.DurableTests {
    /// The consumer's stored cursor and claim, as `(xid, id)` text pairs (`nil` claim: none).
    static func cursorAndClaim(_ consumer: String, channel: String) async throws -> (
        cursor: Int64, claimed: Int64?
    ) {
        try await PostgresBridgeTests.withConnection { connection in
            var result: (Int64, Int64?) = (0, nil)
            let query: PostgresQuery = """
                SELECT id, claimed_id FROM eventbus_cursors WHERE channel = \(channel) AND consumer = \(consumer)
                """
            for try await (id, claimed) in try await connection.query(query, logger: Logger(label: "tests"))
                .decode((Int64, Int64?).self)
            {
                result = (id, claimed)
            }
            return result
        }
    }

    @Test(
        "a receiver process killed (kill -9) mid-batch, then retention, then a restart: its claimed batch is kept and redelivered, what retention deleted is counted, nothing lost silently"
    )
    func retentionKeepsADeadConsumersClaimedBatch() async throws {
        var settings = PostgresEventBridge.Configuration()
        var durable = PostgresEventBridge.Durable(consumer: "-")
        durable.cleanupInterval = .seconds(3600)  // only the test cleans
        settings.delivery = .durable(durable)
        try await PostgresBridgeTests.withNodes(["local"], configuration: settings, durable: true) { nodes in
            let local = nodes[0]
            let channel = local.bridge.channel
            let total = 100
            let batch = 20
            // Each handler takes 25 ms: a batch of 20 is in flight for half a second.
            let first = try DurableReceiverProcess(
                channel: channel, consumer: "peer", batch: batch, delayMilliseconds: 25)
            #expect(await first.wait { $0.lines.contains("ready") }, "\(first.lines)")
            for n in 1...total { try await local.bridge.publish(Ping(from: "local", n: n)) }
            // Killed inside its second batch: 21...40 claimed, a few of them handled.
            #expect(await first.wait { $0.numbers(from: "local").count >= batch + 5 })
            await first.stop()
            let handledBefore = first.numbers(from: "local")
            let stored = try await Self.cursorAndClaim("peer", channel: channel)
            let claimed = try #require(stored.claimed, "the killed receiver left no claim: \(stored)")
            #expect(claimed > stored.cursor, "killed between batches: \(stored), handled \(handledBefore.count)")

            // Retention keeps 10 rows: everything else the cursors allow goes.
            let cleaner = try PostgresBridgeTests.cleaner(channel: channel, configuration: settings, keeping: 10)
            try await cleaner.start()
            let deleted = try await cleaner.bridge.cleanUpOutbox()
            await cleaner.stop()

            let second = try DurableReceiverProcess(channel: channel, consumer: "peer", batch: batch)
            let complete = await second.wait { $0.numbers(from: "local").contains(total) }
            try await Task.sleep(for: .milliseconds(300))  // room for a late report
            await second.stop(SIGTERM)
            #expect(complete, "\(second.lines.suffix(5))")
            let handledAfter = second.numbers(from: "local")
            let handled = Set(handledBefore).union(handledAfter)
            let repeated = Set(handledBefore).intersection(handledAfter)
            // Every event handled, or counted as expired: none lost silently, none counted falsely.
            let missing = Set(1...total).subtracting(handled).sorted()
            #expect(
                handled.count + second.expired == total,
                "\(handled.count) handled + \(second.expired) expired of \(total): missing \(missing)")
            #expect(repeated.count <= second.redelivered, "\(repeated.count) repeated, \(second.redelivered) reported")
            #expect(second.redelivered > 0 && second.redelivered <= batch, "redelivered \(second.redelivered)")
            #expect(handledAfter == handledAfter.sorted() && Set(handledAfter).count == handledAfter.count)
            print(
                "bridge: durable receiver killed mid-batch after \(handledBefore.count) of \(total), retention deleted "
                    + "\(deleted): restarted, \(second.redelivered) redelivered, \(second.expired) expired, "
                    + "\(handled.count) handled, \(total - handled.count - second.expired) lost silently")
        }
    }
}

extension PostgresBridgeTests.DurableTests {
    @Test(
        "retention racing a slow consumer (a bound of 20 rows, cleaned again and again while it reads): every event handled once or counted as expired, never both, never neither"
    )
    func retentionRacingAReader() async throws {
        let channel = PostgresBridgeTests.uniqueChannel()
        var settings = PostgresEventBridge.Configuration()
        var durable = PostgresEventBridge.Durable(consumer: "-")
        durable.cleanupInterval = .seconds(3600)  // only the test cleans
        durable.pollInterval = .milliseconds(50)
        durable.batchSize = 10
        settings.delivery = .durable(durable)
        try await PostgresBridgeTests.withNodes(["a"], configuration: settings, durable: true, channel: channel) {
            nodes in
            let a = nodes[0]
            let b = try PostgresBridgeTests.durableNode("b", channel: channel, configuration: settings)
            b.bridge.register(Ping.self, as: "test.ping.v1")
            let handled = Recorder(Ping.self, on: b.bus) { _ in Thread.sleep(forTimeInterval: 0.002) }
            try await b.start()
            let cleaner = try PostgresBridgeTests.cleaner(channel: channel, configuration: settings, keeping: 20)
            try await cleaner.start()
            let total = 1_000
            let cleaning = Task {
                var deleted = 0
                while !Task.isCancelled {
                    deleted += (try? await cleaner.bridge.cleanUpOutbox()) ?? 0
                    try? await Task.sleep(for: .milliseconds(5))
                }
                return deleted
            }
            for n in 1...total { try await a.bridge.publish(Ping(from: "a", n: n)) }
            func expired() -> Int {
                b.issues.events.reduce(0) { sum, issue in
                    if case .expired("b", let count) = issue { return sum + count }
                    return sum
                }
            }
            let settled = await handled.wait(timeout: .seconds(60)) { events in
                Set(events.map(\.n)).count + expired() >= total
            }
            cleaning.cancel()
            let deleted = await cleaning.value
            try await Task.sleep(for: .milliseconds(300))  // room for a late delivery or report
            await cleaner.stop()
            await b.stop()
            let numbers = handled.events.map(\.n)
            #expect(settled, "\(Set(numbers).count) handled + \(expired()) expired of \(total)")
            #expect(Set(numbers).count + expired() == total, "\(Set(numbers).count) handled + \(expired()) expired")
            #expect(numbers.count == Set(numbers).count, "handled twice")
            #expect(numbers == numbers.sorted(), "out of order")
            // The gaps that retention's deletions leave in the publisher's numbers are the
            // `expired` reports, not `missed` too (before: each deletion while the reader waited
            // between batches was reported twice).
            let missed = b.issues.events.reduce(0) { sum, issue in
                if case .missed(_, let count, _) = issue { return sum + Int(count) }
                return sum
            }
            #expect(missed == 0, "\(missed) reported missed beside \(expired()) expired")
            print(
                "bridge: retention racing a slow reader: \(total) published, \(numbers.count) handled, "
                    + "\(expired()) expired, \(deleted) rows deleted by the bound; handled + expired - published = "
                    + "\(Set(numbers).count + expired() - total)")
        }
    }
}
