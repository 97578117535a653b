import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("Operations: consumers' lag, listing, removal and cursor resets")
    struct OperationsTests {
        /// A started durable node of consumer `consumer` on `channel` with Ping registered, made with
        /// `settings`' durable settings; `handler` runs first in each Ping's handler (on the bus queue).
        static func member(
            _ consumer: String, channel: String, settings: PostgresEventBridge.Durable? = nil,
            start: Bool = true
        ) async throws -> ClusterNode {
            var configuration = PostgresEventBridge.Configuration()
            if let settings { configuration.delivery = .durable(settings) }
            let node = try PostgresBridgeTests.durableNode(consumer, channel: channel, configuration: configuration)
            node.bridge.register(Ping.self, as: "test.ping.v1")
            if start { try await node.start() }
            return node
        }

        /// The channel's outbox rows in delivery order: id and insert time.
        static func rows(of channel: String) async throws -> [(id: Int64, createdAt: Date)] {
            try await PostgresBridgeTests.withConnection { connection in
                var rows: [(Int64, Date)] = []
                let query: PostgresQuery = """
                    SELECT id, created_at FROM eventbus_outbox WHERE channel = \(channel) ORDER BY xid, id
                    """
                for try await row in try await connection.query(query, logger: Logger(label: "tests"))
                    .decode((Int64, Date).self)
                {
                    rows.append(row)
                }
                return rows
            }
        }

        /// What a bus delivered, Pings and cursor announcements, in the order of its queue.
        final class Journal: Sendable {
            enum Entry: Equatable, Sendable {
                case ping(Int)
                case reset(again: Int, skipped: Int)
                case removed
            }

            private let entries = NIOLockedValueBox<[Entry]>([])
            private let tokens: [EventToken]

            init(_ bus: EventBus) {
                let entries = self.entries
                tokens = [
                    bus.on(Ping.self).next { ping in entries.withLockedValue { $0.append(.ping(ping.n)) } },
                    bus.on(BridgeIssue.self).next { issue in
                        switch issue {
                        case .cursorReset(_, _, let again, let skipped):
                            entries.withLockedValue { $0.append(.reset(again: again, skipped: skipped)) }
                        case .consumerRemoved:
                            entries.withLockedValue { $0.append(.removed) }
                        default: break
                        }
                    },
                ]
            }

            deinit { for token in tokens { token.dispose() } }

            var all: [Entry] { entries.withLockedValue { $0 } }

            /// The Pings after the last entry matching `mark` (all of them without one).
            func pings(after mark: (Entry) -> Bool) -> [Int] {
                let all = self.all
                let start = all.lastIndex(where: mark).map { $0 + 1 } ?? 0
                return all[start...].compactMap { if case .ping(let n) = $0 { n } else { nil } }
            }

            /// Waits up to `timeout` for `condition`.
            func wait(timeout: Duration = .seconds(10), _ condition: ([Entry]) -> Bool) async -> Bool {
                let deadline = ContinuousClock.now + timeout
                while !condition(all) {
                    if ContinuousClock.now >= deadline { return false }
                    try? await Task.sleep(for: .milliseconds(5))
                }
                return true
            }
        }

        @Test(
            "a stopped consumer with a backlog of 30: consumers() says 30 unread, the oldest's insert time and age, a free lease; a caught-up one 0"
        )
        func lagOfAStoppedConsumer() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.member("publisher", channel: channel)
            try await Self.stopOnceLeased(try await Self.member("stopped", channel: channel), seenBy: publisher)
            let published = ContinuousClock.now
            for n in 1...30 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            try await Task.sleep(for: .milliseconds(200))
            let rows = try await Self.rows(of: channel)
            #expect(rows.count == 30)
            let caughtUp = await Self.waitUntil {
                try await publisher.bridge.consumer(named: "publisher")?.unread == 0
            }
            #expect(caughtUp, "the publisher's own consumer catches up")
            let started = ContinuousClock.now
            let consumers = try await publisher.bridge.consumers()
            let listing = ContinuousClock.now - started
            #expect(consumers.map(\.name) == ["publisher", "stopped"])
            let lagging = try #require(consumers.last)
            #expect(lagging.unread == 30, "\(lagging)")
            #expect(lagging.oldestUnreadAt == rows.first?.createdAt, "the first row's created_at")
            let age = try #require(lagging.oldestUnreadAge)
            #expect(age > .zero && age < ContinuousClock.now - published + .seconds(1), "\(age)")
            #expect(lagging.lease == .free(epoch: 1), "released by its clean stop: \(lagging.lease)")
            #expect(lagging.claimedThroughRowID == nil && lagging.pendingReset == nil && lagging.group == nil)
            #expect(lagging.lag.unread == 30 && lagging.lag.consumer == "stopped")
            let own = try #require(consumers.first)
            #expect(own.unread == 0 && own.oldestUnreadAt == nil && own.oldestUnreadAge == nil)
            if case .held(let owner, _, _) = own.lease {
                #expect(owner == publisher.bridge.leaseOwnerID)
            } else {
                Issue.record("the running publisher holds its lease: \(own.lease)")
            }
            #expect(own.cursorRowID == rows.last?.id)
            #expect(try await publisher.bridge.consumer(named: "nobody") == nil)
            print("bridge: operations, consumers() with a backlog of 30 listed in \(listing)")
            await publisher.stop()
        }

        @Test("a running consumer's lag: measured while it reads a backlog slowly, then 0 once caught up")
        func lagWhileRunning() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.member("publisher", channel: channel)
            var durable = PostgresEventBridge.Durable(consumer: "reader")
            durable.lagInterval = .milliseconds(50)
            durable.batchSize = 5
            let reader = try await Self.member("reader", channel: channel, settings: durable, start: false)
            let handled = Recorder(Ping.self, on: reader.bus) { _ in Thread.sleep(forTimeInterval: 0.01) }
            try await reader.start()
            let observed = NIOLockedValueBox<[Int]>([])
            let watching = Task {
                while !Task.isCancelled {
                    if let lag = reader.bridge.lag.first { observed.withLockedValue { $0.append(lag.unread) } }
                    try? await Task.sleep(for: .milliseconds(10))
                }
            }
            for n in 1...60 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            #expect(await handled.wait(forCount: 60, timeout: .seconds(20)))
            let settled = await Self.waitUntil { reader.bridge.lag.first?.unread == 0 }
            watching.cancel()
            let seen = observed.withLockedValue { $0 }
            #expect(settled, "the lag went back to 0: \(seen.suffix(5))")
            #expect((seen.max() ?? 0) >= 10, "a backlog was measured while reading: max \(seen.max() ?? 0)")
            let last = try #require(reader.bridge.lag.first)
            #expect(last.consumer == "reader" && last.unreadIsExact && last.oldestUnreadAge == nil)
            #expect(publisher.bridge.lag.map(\.consumer) == ["publisher"], "each bridge measures its own consumer")
            print("bridge: operations, a running consumer's lag measured at most \(seen.max() ?? 0), then 0")
            for node in [reader, publisher] { await node.stop() }
        }

        @Test(
            "list and remove: a stopped consumer is removed (retention then deletes what it held back), a running one refused, then forced: it starts again after the last event, announced"
        )
        func listAndRemove() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.member("publisher", channel: channel)
            let running = try await Self.member("running", channel: channel)
            let journal = Journal(running.bus)
            try await Self.stopOnceLeased(try await Self.member("stopped", channel: channel), seenBy: publisher)
            for n in 1...10 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            #expect(await journal.wait { $0.contains(.ping(10)) })
            #expect(try await publisher.bridge.consumers().map(\.name) == ["publisher", "running", "stopped"])
            // The stopped consumer holds the 10 rows back from the cleanup of passed rows.
            #expect(
                await Self.waitUntil {
                    try await publisher.bridge.consumers().filter { $0.unread == 0 }.map(\.name) == [
                        "publisher", "running",
                    ]
                })
            #expect(try await publisher.bridge.cleanUpOutbox() == 0)
            #expect(try await publisher.bridge.removeConsumer("stopped") == .removed)
            #expect(try await publisher.bridge.removeConsumer("stopped") == .unknown)
            #expect(try await publisher.bridge.cleanUpOutbox() == 10, "retention no longer waits for it")

            let refused = try await publisher.bridge.removeConsumer("running")
            guard case .leased(let owner, _) = refused else {
                Issue.record("a running consumer's removal is refused: \(refused)")
                return
            }
            #expect(owner == running.bridge.leaseOwnerID)
            #expect(try await publisher.bridge.consumer(named: "running") != nil, "still there")
            let forced = try await publisher.bridge.removeConsumer("running", force: true)
            if case .removedWhileLeased(owner, _) = forced {} else { Issue.record("forced: \(forced)") }
            // It finds out at its next renewal, makes its cursor again, and says so.
            #expect(await journal.wait { $0.contains(.removed) }, "\(journal.all)")
            #expect(try await publisher.bridge.consumer(named: "running") != nil, "made again")
            try await publisher.bridge.publish(Ping(from: "p", n: 11))
            #expect(await journal.wait { $0.contains(.ping(11)) }, "it goes on as a new consumer")
            #expect(journal.pings(after: { $0 == .removed }) == [11], "\(journal.all)")
            for node in [running, publisher] { await node.stop() }
        }

        @Test(
            "reset with a running bridge: to a row, to a time (each replayed once, in order, announced just before), to the end (the backlog skipped, announced)"
        )
        func resetWhileRunning() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.member("publisher", channel: channel)
            var durable = PostgresEventBridge.Durable(consumer: "reader")
            durable.batchSize = 5
            let reader = try await Self.member("reader", channel: channel, settings: durable, start: false)
            let journal = Journal(reader.bus)
            let slow = NIOLockedValueBox(false)
            let pacing = Recorder(Ping.self, on: reader.bus) { _ in
                if slow.withLockedValue({ $0 }) { Thread.sleep(forTimeInterval: 0.05) }
            }
            _ = pacing
            try await reader.start()
            for n in 1...20 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            #expect(await journal.wait { $0.contains(.ping(20)) })
            let rows = try await Self.rows(of: channel)
            try #require(rows.count == 20)
            #expect(await Self.waitUntil { try await publisher.bridge.consumer(named: "reader")?.unread == 0 })

            // To row 6: 6...20 again, announced just before.
            let toRow = try await publisher.bridge.resetCursor(of: "reader", to: .row(rows[5].id))
            #expect(toRow.again == 15 && toRow.skipped == 0, "\(toRow)")
            #expect(toRow.holder == reader.bridge.leaseOwnerID && toRow.previousRowID == rows[19].id)
            let resetAt = ContinuousClock.now
            let isReset: (Journal.Entry) -> Bool = { if case .reset = $0 { true } else { false } }
            #expect(await journal.wait { $0.contains(where: isReset) }, "\(journal.all)")
            let announced = ContinuousClock.now - resetAt
            #expect(announced < .seconds(3), "a third of the lease (1 s) plus a reconnection: \(announced)")
            #expect(await journal.wait { $0.last == .ping(20) }, "\(journal.all)")
            #expect(journal.all.filter(isReset) == [.reset(again: 15, skipped: 0)])
            #expect(journal.pings(after: isReset) == Array(6...20), "\(journal.all)")

            // To the time row 11 was stored: 11...20 again.
            let toTime = try await publisher.bridge.resetCursor(of: "reader", to: .time(rows[10].createdAt))
            #expect(toTime.again == 10 && toTime.skipped == 0, "\(toTime)")
            #expect(await journal.wait { $0.filter(isReset).count == 2 && $0.last == .ping(20) }, "\(journal.all)")
            #expect(journal.pings(after: isReset) == Array(11...20), "\(journal.all)")
            #expect(
                try await publisher.bridge.consumer(named: "reader")?.pendingReset == nil, "cleared once acknowledged")

            // To the end with a backlog: the reader slowed down, 40 more published.
            slow.withLockedValue { $0 = true }
            for n in 21...60 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            #expect(await journal.wait { $0.contains(.ping(25)) })
            let toEnd = try await publisher.bridge.resetCursor(of: "reader", to: .end)
            slow.withLockedValue { $0 = false }
            #expect(toEnd.again == 0 && toEnd.skipped > 0, "\(toEnd)")
            #expect(await journal.wait { $0.filter(isReset).count == 3 }, "\(journal.all)")
            try await publisher.bridge.publish(Ping(from: "p", n: 61))
            #expect(await journal.wait { $0.contains(.ping(61)) })
            let afterEnd = journal.pings(after: isReset)
            #expect(afterEnd == [61], "nothing of the backlog after the announcement: \(afterEnd)")
            let delivered = Set(journal.pings(after: { $0 == .reset(again: 10, skipped: 0) })).filter {
                $0 > 20 && $0 <= 60
            }
            #expect(delivered.count + toEnd.skipped >= 40, "\(delivered.count) delivered, \(toEnd.skipped) skipped")
            #expect(delivered.count < 40, "the backlog was skipped: \(delivered.count) of 40 delivered")
            print(
                "bridge: operations, resets while running: to a row (15 again, announced \(announced) after the reset), "
                    + "to a time (10 again), to the end (\(toEnd.skipped) skipped, \(delivered.count) of the backlog "
                    + "delivered before), each announced")

            await #expect(throws: PostgresEventBridgeError.self) {
                try await publisher.bridge.resetCursor(of: "nobody", to: .end)
            }
            await #expect(throws: PostgresEventBridgeError.self) {
                try await publisher.bridge.resetCursor(of: "reader", to: .row(-5))
            }
            for node in [reader, publisher] { await node.stop() }
        }

        @Test(
            "a running consumer group: its member measures each partition's lag; a partition's reset is fenced, announced by the member and replayed"
        )
        func groupLagAndReset() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.member("publisher", channel: channel)
            publisher.bridge.register(RoomMessage.self, as: "test.room-message.v1")
            var durable = PostgresEventBridge.Durable(group: "billing", partitions: 2)
            durable.lagInterval = .milliseconds(100)
            var settings = PostgresEventBridge.Configuration()
            settings.delivery = .durable(durable)
            let member = try ClusterNode(
                name: "\(channel)_billing", url: PostgresBridgeTests.url, channel: channel, configuration: settings)
            member.bridge.register(RoomMessage.self, as: "test.room-message.v1")
            let received = Recorder(RoomMessage.self, on: member.bus)
            try await member.start()
            for n in 0..<12 { try await publisher.bridge.publish(RoomMessage(room: "r\(n % 4)", text: "\(n)")) }
            #expect(await received.wait(forCount: 12))
            let measured = await Self.waitUntil {
                let lag = member.bridge.lag
                return lag.map(\.consumer) == ["billing#0", "billing#1"] && lag.allSatisfy { $0.unread == 0 }
            }
            #expect(measured, "both partitions measured, caught up: \(member.bridge.lag)")
            #expect(member.bridge.lag.map(\.group) == ["billing", "billing"])
            #expect(member.bridge.lag.map(\.partition) == [0, 1])
            let partitions = try await publisher.bridge.consumers().filter { $0.group == "billing" }
            #expect(partitions.map(\.partition) == [0, 1] && partitions.allSatisfy { $0.lease.isHeld })

            let reset = try await publisher.bridge.resetCursor(of: "billing#0", to: .beginning)
            #expect(reset.again > 0 && reset.again < 12 && reset.holder == member.bridge.leaseOwnerID, "\(reset)")
            let isReset: (BridgeIssue) -> Bool = {
                if case .cursorReset("billing#0", _, _, _) = $0 { true } else { false }
            }
            #expect(await member.issues.wait { $0.contains(where: isReset) }, "\(member.issues.events)")
            #expect(await received.wait(forCount: 12 + reset.again), "partition 0's \(reset.again) events again")
            try await Task.sleep(for: .milliseconds(200))
            #expect(received.events.count == 12 + reset.again, "nothing more: \(received.events.count)")
            for node in [member, publisher] { await node.stop() }
        }

        @Test(
            "a consumer group's partitions (cursor rows written by hand, in a schema of its own): listed with their group, each counting its own rows, a lapsed lease shown; the group removed at once, refused while one partition is leased, then forced"
        )
        func groupColumns() async throws {
            let schema = "ops_" + PostgresBridgeTests.uniqueChannel()
            let channel = PostgresBridgeTests.uniqueChannel()
            let logger = Logger(label: "tests")
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA \(schema)"), logger: logger)
                    .consume()
            }
            // Every connection of this bridge works in that schema: its tables are its own.
            let searchPath = ("options", "-c search_path=\(schema)")
            var pool = PostgresBridgeTests.url.clientConfiguration()
            pool.options.additionalStartupParameters = [searchPath]
            var listen = PostgresBridgeTests.url.connectionConfiguration(applicationName: "ops-groups")
            listen.options.additionalStartupParameters.append(searchPath)
            var settings = PostgresEventBridge.Configuration()
            settings.delivery = .durable(.init(consumer: "operator"))
            let client = PostgresClient(configuration: pool)
            let running = Task { await client.run() }
            let bridge = try PostgresEventBridge(
                bus: EventBus(), listenConfiguration: listen, client: client, channel: channel, configuration: settings)
            #expect(try await bridge.consumers().isEmpty, "the schema made, no consumer yet")
            let holder = UUID()
            try await PostgresBridgeTests.withConnection { connection in
                for statement in [
                    """
                    INSERT INTO \(schema).eventbus_cursors (channel, consumer, xid, id, group_name, partition, partitions)
                    VALUES ('\(channel)', 'billing#0', '0', 0, 'billing', 0, 3), ('\(channel)', 'billing#1', '0', 0, 'billing', 1, 3),
                        ('\(channel)', 'billing#2', '0', 0, 'billing', 2, 3), ('\(channel)', 'solo', '0', 0, NULL, NULL, NULL)
                    """,
                    """
                    INSERT INTO \(schema).eventbus_outbox (channel, payload, ordering_hash)
                    SELECT '\(channel)', 'x', n FROM generate_series(0, 5) AS n
                    """,
                    """
                    UPDATE \(schema).eventbus_cursors SET owner = '\(holder)', lease_until = now() + interval '1 hour'
                    WHERE consumer = 'billing#1'
                    """,
                    """
                    UPDATE \(schema).eventbus_cursors SET owner = '\(holder)', lease_until = now() - interval '1 minute'
                    WHERE consumer = 'billing#0'
                    """,
                ] {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).consume()
                }
            }
            let listed = try await bridge.consumers()
            #expect(listed.map(\.name) == ["billing#0", "billing#1", "billing#2", "solo"])
            #expect(listed.map(\.group) == ["billing", "billing", "billing", nil])
            #expect(listed.map(\.partition) == [0, 1, 2, nil] && listed.map(\.partitions) == [3, 3, 3, nil])
            #expect(listed.map(\.unread) == [2, 2, 2, 6], "each partition counts its own rows (hash modulo 3)")
            if case .lapsed(holder, _, _) = listed[0].lease {} else { Issue.record("lapsed: \(listed[0].lease)") }
            #expect(listed[1].lease.isHeld && !listed[2].lease.isHeld)
            let refused = try await bridge.removeConsumerGroup("billing")
            if case .leased(holder, _) = refused {} else { Issue.record("refused while leased: \(refused)") }
            #expect(try await bridge.consumers().count == 4, "nothing deleted")
            let forced = try await bridge.removeConsumerGroup("billing", force: true)
            if case .removedWhileLeased(holder, _) = forced {} else { Issue.record("forced: \(forced)") }
            #expect(try await bridge.consumers().map(\.name) == ["solo"])
            #expect(try await bridge.removeConsumerGroup("billing") == .unknown)
            #expect(try await bridge.removeConsumerGroup("solo") == .unknown, "not a group")
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "DROP SCHEMA \(schema) CASCADE"), logger: logger)
                    .consume()
            }
            running.cancel()
            await running.value
        }

        /// Stops `node` once `observer` sees that it holds its consumer's lease, so that it gives the
        /// lease up (a stop while it is taking the lease leaves one that lapses, `leaseDuration` later).
        static func stopOnceLeased(_ node: ClusterNode, seenBy observer: ClusterNode) async throws {
            let consumer = node.name.split(separator: "_").last.map(String.init) ?? node.name
            #expect(await waitUntil { try await observer.bridge.consumer(named: consumer)?.lease.isHeld == true })
            await node.stop()
        }

        /// Polls `condition` every 20 ms for 10 s at most; returns whether it held.
        static func waitUntil(
            timeout: Duration = .seconds(10), _ condition: () async throws -> Bool
        ) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if (try? await condition()) == true { return true }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return false
        }
    }
}
