import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("Consumer groups: members share a durable consumer's partitions; each event once, in order per key")
    struct ConsumerGroupTests {
        /// A started member of group `group` (of `partitions` partitions) on `channel`, with Ping and
        /// RoomMessage registered.
        static func member(
            _ group: String, partitions: Int = 8, channel: String, start: Bool = true,
            timeout: Duration = .seconds(20)
        ) async throws -> ClusterNode {
            var settings = PostgresEventBridge.Configuration()
            settings.delivery = .durable(.init(group: group, partitions: partitions))
            let node = try ClusterNode(
                name: "\(channel)_\(group)_\(UUID().uuidString.prefix(4))", url: PostgresBridgeTests.url,
                channel: channel, configuration: settings)
            node.bridge.register(Ping.self, as: "test.ping.v1")
            node.bridge.register(RoomMessage.self, as: "test.room-message.v1")
            if start { try await node.start(timeout: timeout) }
            return node
        }

        /// A started durable node publishing on `channel` (its own consumer reads nothing of interest).
        static func publisher(channel: String) async throws -> ClusterNode {
            let node = try PostgresBridgeTests.durableNode("publisher", channel: channel)
            node.bridge.register(Ping.self, as: "test.ping.v1")
            node.bridge.register(RoomMessage.self, as: "test.room-message.v1")
            try await node.start()
            return node
        }

        /// Publishes `rounds` messages to each of `rooms` rooms, numbered `from`… in each room.
        static func publishRooms(_ node: ClusterNode, rooms: Int = 16, rounds: Range<Int>) async throws {
            for n in rounds {
                for room in 0..<rooms { try await node.bridge.publish(RoomMessage(room: "r\(room)", text: "\(n)")) }
            }
        }

        /// The message numbers of each room, in the order they were received.
        static func byRoom(_ messages: [RoomMessage]) -> [String: [Int]] {
            Dictionary(grouping: messages, by: \.room).mapValues { $0.compactMap { Int($0.text) } }
        }

        static func redelivered(_ node: ClusterNode) -> Int {
            node.issues.events.reduce(0) { sum, issue in
                if case .redelivered(_, let count) = issue { sum + count } else { sum }
            }
        }

        /// Waits until each of `recorders` received something from `publish` (members share the work
        /// once they have evened out their shares: within two coordination turns, 2 s here).
        static func settle() async throws { try await Task.sleep(for: .milliseconds(2_500)) }

        @Test("two members share the work: every event once, each key (room) handled by one member, in order")
        func sharedOncePerKeyInOrder() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.publisher(channel: channel)
            let members = [
                try await Self.member("billing", channel: channel), try await Self.member("billing", channel: channel),
            ]
            let received = members.map { Recorder(RoomMessage.self, on: $0.bus) }
            try await Self.settle()
            try await Self.publishRooms(publisher, rounds: 0..<20)
            #expect(
                await received[0].wait(timeout: .seconds(30)) { _ in received.map(\.events.count).reduce(0, +) >= 320 })
            try await Task.sleep(for: .milliseconds(500))  // room for a second delivery
            let all = received.flatMap(\.events)
            #expect(
                all.count == 320 && Set(all.map { "\($0.room)/\($0.text)" }).count == 320, "each once: \(all.count)")
            let rooms = received.map { Set(Self.byRoom($0.events).keys) }
            #expect(rooms[0].isDisjoint(with: rooms[1]), "a key is one member's: \(rooms)")
            #expect(!rooms[0].isEmpty && !rooms[1].isEmpty, "both members worked: \(received.map(\.events.count))")
            for recorder in received {
                for (room, numbers) in Self.byRoom(recorder.events) {
                    #expect(numbers == Array(0..<20), "room \(room) in order: \(numbers)")
                }
            }
            #expect(members.map(Self.redelivered) == [0, 0])
            #expect(members.allSatisfy { $0.issues.events.isEmpty }, "no false gap: \(members.map(\.issues.events))")
            print("bridge: consumer group of 2: \(received.map(\.events.count)) events of 320, 16 keys, 0 twice")
            for node in members + [publisher] { await node.stop() }
        }

        @Test("events without a key are ordered by their publisher: each publisher's events go to one member, in order")
        func keylessOrderedPerPublisher() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publishers = [
                try await Self.publisher(channel: channel), try await Self.publisher(channel: channel),
                try await Self.publisher(channel: channel),
            ]
            let members = [
                try await Self.member("audit", channel: channel), try await Self.member("audit", channel: channel),
            ]
            let received = members.map { Recorder(Ping.self, on: $0.bus) }
            try await Self.settle()
            for n in 1...40 {
                for (index, publisher) in publishers.enumerated() {
                    try await publisher.bridge.publish(Ping(from: "p\(index)", n: n))
                }
            }
            #expect(
                await received[0].wait(timeout: .seconds(30)) { _ in received.map(\.events.count).reduce(0, +) >= 120 })
            try await Task.sleep(for: .milliseconds(300))
            for index in 0..<3 {
                let holders = received.filter { $0.events.contains { $0.from == "p\(index)" } }
                #expect(holders.count == 1, "publisher p\(index)'s events at one member")
                #expect(holders.first?.events.filter { $0.from == "p\(index)" }.map(\.n) == Array(1...40))
            }
            #expect(members.allSatisfy { $0.issues.events.isEmpty }, "no false gap: \(members.map(\.issues.events))")
            for node in members + publishers { await node.stop() }
        }

        @Test("members joining and leaving cleanly hand partitions over without redelivery; nothing lost or twice")
        func cleanJoinAndLeave() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.publisher(channel: channel)
            let first = try await Self.member("billing", channel: channel)
            let atFirst = Recorder(RoomMessage.self, on: first.bus)
            try await Self.publishRooms(publisher, rounds: 0..<5)
            #expect(await atFirst.wait(forCount: 80, timeout: .seconds(20)))
            let second = try await Self.member("billing", channel: channel)
            let atSecond = Recorder(RoomMessage.self, on: second.bus)
            try await Self.settle()
            try await Self.publishRooms(publisher, rounds: 5..<10)
            #expect(
                await atFirst.wait(timeout: .seconds(20)) { _ in atFirst.events.count + atSecond.events.count >= 160 })
            #expect(!atSecond.events.isEmpty, "the member that joined took a share")
            await first.stop()  // gives its partitions up after its last batch
            try await Self.publishRooms(publisher, rounds: 10..<15)
            #expect(
                await atSecond.wait(timeout: .seconds(20)) { _ in atFirst.events.count + atSecond.events.count >= 240 })
            try await Task.sleep(for: .milliseconds(300))
            let all = atFirst.events + atSecond.events
            #expect(
                all.count == 240 && Set(all.map { "\($0.room)/\($0.text)" }).count == 240, "each once: \(all.count)")
            #expect([first, second].map(Self.redelivered) == [0, 0], "no redelivery at a clean hand-over")
            for recorder in [atFirst, atSecond] {
                for (room, numbers) in Self.byRoom(recorder.events) {
                    #expect(numbers == numbers.sorted(), "room \(room) in order: \(numbers)")
                }
            }
            print(
                "bridge: consumer group join and clean leave: \(atFirst.events.count) + \(atSecond.events.count) of 240, "
                    + "0 redelivered, 0 twice")
            for node in [second, publisher] { await node.stop() }
        }

        @Test(
            "kill -9 of a member (a ClusterPeer process): the other takes its partitions within 5 s; nothing lost, repeats announced"
        )
        func killedMemberTakenOver() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.publisher(channel: channel)
            let peer = try DurableTests.DurableReceiverProcess(
                channel: channel, consumer: "billing", batch: 20, delayMilliseconds: 15,
                extra: ["PEER_GROUP": "billing", "PEER_PARTITIONS": "8"])
            #expect(await peer.wait { $0.lines.contains("ready") }, "\(peer.lines)")
            let survivor = try await Self.member("billing", channel: channel)
            let atSurvivor = Recorder(RoomMessage.self, on: survivor.bus)
            try await Self.settle()
            let atPeer = { (0..<16).flatMap { room in peer.numbers(from: "r\(room)").map { "r\(room)/\($0)" } } }
            try await Self.publishRooms(publisher, rounds: 0..<10)
            #expect(await peer.wait { _ in atPeer().count >= 30 })
            await peer.stop()  // SIGKILL, inside a batch: its handlers take 15 ms an event
            let killed = ContinuousClock.now
            let handledByPeer = Set(atPeer())
            try await Self.publishRooms(publisher, rounds: 10..<20)
            let all = Set((0..<20).flatMap { n in (0..<16).map { "r\($0)/\(n)" } })
            let caughtUp = await atSurvivor.wait(timeout: .seconds(15)) { events in
                handledByPeer.union(events.map { "\($0.room)/\($0.text)" }) == all
            }
            let takeover = ContinuousClock.now - killed
            #expect(caughtUp, "every event reached the survivor or was handled by the peer before the kill")
            try await Task.sleep(for: .milliseconds(300))
            let atTheSurvivor = atSurvivor.events.map { "\($0.room)/\($0.text)" }
            #expect(Set(atTheSurvivor).count == atTheSurvivor.count, "the survivor got each once")
            let repeated = handledByPeer.intersection(atTheSurvivor).count
            let announced = Self.redelivered(survivor)
            #expect(repeated <= announced, "\(repeated) repeated, \(announced) announced")
            #expect(announced <= 20, "at most the peer's batch: \(announced)")
            for (room, numbers) in Self.byRoom(atSurvivor.events) {
                #expect(numbers == numbers.sorted(), "room \(room) in order at the survivor: \(numbers)")
            }
            #expect(takeover <= .seconds(5), "the survivor took over and caught up \(takeover) after the kill")
            print(
                "bridge: consumer group member killed (kill -9) mid-batch after \(handledByPeer.count) events: the survivor "
                    + "caught up \(takeover) after the kill, \(announced) redelivered (announced), \(repeated) repeated, 0 lost"
            )
            for node in [survivor, publisher] { await node.stop() }
        }

        /// The outbox and cursor tables as the version before consumer groups made them.
        static let tablesBeforeGroups = [
            """
            CREATE TABLE eventbus_outbox (
                id bigserial PRIMARY KEY, channel text NOT NULL,
                xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                created_at timestamptz NOT NULL DEFAULT clock_timestamp(), payload text NOT NULL)
            """,
            """
            CREATE TABLE eventbus_cursors (
                channel text NOT NULL, consumer text NOT NULL, xid xid8 NOT NULL, id bigint NOT NULL,
                claimed_xid xid8, claimed_id bigint, expired bigint NOT NULL DEFAULT 0,
                updated_at timestamptz NOT NULL DEFAULT now(), owner uuid, lease_until timestamptz,
                lease_epoch bigint NOT NULL DEFAULT 0, PRIMARY KEY (channel, consumer))
            """,
        ]

        @Test(
            "the schema migrates itself from the tables before groups: an old row and an old cursor are read, then a group works"
        )
        func migratesFromTablesBeforeGroups() async throws {
            let database = "eventbus_migration_" + UUID().uuidString.prefix(8).lowercased()
            let logger = Logger(label: "tests")
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(database)"), logger: logger)
                    .consume()
            }
            let environment = try #require(ProcessInfo.processInfo.environment[DatabaseURL.environmentVariable])
            let url = try #require(DatabaseURL(environment.replacingOccurrences(of: "/postgres", with: "/\(database)")))
            let channel = PostgresBridgeTests.uniqueChannel()
            let old = try await PostgresConnection.connect(
                configuration: url.connectionConfiguration(applicationName: "old-instance"), id: 1, logger: logger)
            for statement in Self.tablesBeforeGroups {
                try await old.query(PostgresQuery(unsafeSQL: statement), logger: logger).consume()
            }
            // What an instance of the version before left: a consumer's cursor, and a row after it.
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let envelope =
                #"{"v":3,"o":"\#(UUID().uuidString)","s":1,"n":"test.ping.v1","ts":\#(now),"p":{"from":"old","n":1}}"#
            try await old.query(
                "INSERT INTO eventbus_cursors (channel, consumer, xid, id) VALUES (\(channel), 'reader', '0'::xid8, 0)",
                logger: logger
            ).consume()
            try await old.query(
                "INSERT INTO eventbus_outbox (channel, payload) VALUES (\(channel), \(envelope))", logger: logger
            ).consume()
            try await old.close()
            func node(_ name: String, _ delivery: PostgresEventBridge.Durable) throws -> ClusterNode {
                var settings = PostgresEventBridge.Configuration()
                settings.delivery = .durable(delivery)
                let node = try ClusterNode(
                    name: "\(channel)_\(name)", url: url, channel: channel, configuration: settings)
                node.bridge.register(Ping.self, as: "test.ping.v1")
                node.bridge.register(RoomMessage.self, as: "test.room-message.v1")
                return node
            }
            let reader = try node("reader", .init(consumer: "reader"))
            let fromOld = Recorder(Ping.self, on: reader.bus)
            try await reader.start()
            #expect(await fromOld.wait { $0 == [Ping(from: "old", n: 1)] }, "the old row, read after the migration")
            let member = try node("member", .init(group: "billing", partitions: 4))
            let received = Recorder(RoomMessage.self, on: member.bus)
            try await member.start()
            try await Self.publishRooms(reader, rooms: 8, rounds: 0..<2)
            #expect(await received.wait(forCount: 16, timeout: .seconds(20)))
            #expect(
                reader.issues.events.isEmpty && member.issues.events.isEmpty,
                "\(reader.issues.events) \(member.issues.events)")
            for node in [member, reader] { await node.stop() }
        }

        @Test("more members than partitions: the extra member stands by (reported once) and takes over at a clean stop")
        func extraMemberStandsBy() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.publisher(channel: channel)
            let first = try await Self.member("solo", partitions: 1, channel: channel)
            let second = try await Self.member("solo", partitions: 1, channel: channel)
            let isStandingBy = { (issue: BridgeIssue) in if case .standingBy = issue { true } else { false } }
            #expect(await second.issues.wait(timeout: .seconds(10)) { $0.contains(where: isStandingBy) })
            let received = [Recorder(RoomMessage.self, on: first.bus), Recorder(RoomMessage.self, on: second.bus)]
            try await Self.publishRooms(publisher, rooms: 4, rounds: 0..<5)
            #expect(await received[0].wait(forCount: 20))
            await first.stop()
            try await Self.publishRooms(publisher, rooms: 4, rounds: 5..<10)
            #expect(await received[1].wait(forCount: 20, timeout: .seconds(10)), "the standby took over")
            #expect(received.map(\.events.count) == [20, 20])
            #expect(second.issues.events.filter(isStandingBy).count == 1 && Self.redelivered(second) == 0)
            for node in [second, publisher] { await node.stop() }
        }

        @Test(
            "a member with another number of partitions, or a plain consumer named like a partition, is refused and reported"
        )
        func mismatchesRefused() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let member = try await Self.member("billing", partitions: 4, channel: channel)
            let other = try await Self.member("billing", partitions: 8, channel: channel, start: false)
            await #expect(throws: ClusterNodeError.self) { try await other.start(timeout: .seconds(2)) }
            #expect(
                other.statuses.events.contains {
                    "\($0)".contains("has 4 partitions, this bridge was configured with 8")
                },
                "\(other.statuses.events)")
            let plain = try PostgresBridgeTests.durableNode("billing#2", channel: channel)
            await #expect(throws: ClusterNodeError.self) { try await plain.start(timeout: .seconds(2)) }
            #expect(plain.statuses.events.contains { "\($0)".contains("names a cursor of the other kind") })
            #expect(throws: PostgresEventBridgeError.self) {
                var settings = PostgresEventBridge.Configuration()
                settings.delivery = .durable(.init(group: "billing", partitions: 0))
                _ = try ClusterNode(name: "x", url: PostgresBridgeTests.url, channel: channel, configuration: settings)
            }
            for node in [other, plain, member] { await node.stop() }
        }

        @Test(
            "retention counts a stopped group's unread rows once, each in its own partition: the sum of expired is what was deleted"
        )
        func retentionCountsPerPartition() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.publisher(channel: channel)
            let member = try await Self.member("billing", partitions: 4, channel: channel)
            let received = Recorder(RoomMessage.self, on: member.bus)
            try await Self.publishRooms(publisher, rounds: 0..<2)
            #expect(await received.wait(forCount: 32))
            await member.stop()
            try await Self.publishRooms(publisher, rounds: 2..<7)  // 80 unread by the group
            var durable = PostgresEventBridge.Durable(consumer: "cleaner")
            durable.retentionCount = 10
            var settings = PostgresEventBridge.Configuration()
            settings.delivery = .durable(durable)
            let cleaner = try PostgresBridgeTests.durableNode("cleaner", channel: channel, configuration: settings)
            try await cleaner.start()
            let deleted = try await cleaner.bridge.cleanUpOutbox()
            await cleaner.stop()
            let restarted = try await Self.member("billing", partitions: 4, channel: channel)
            let again = Recorder(RoomMessage.self, on: restarted.bus)
            let expired = { () -> Int in
                restarted.issues.events.reduce(0) { sum, issue in
                    if case .expired(_, let count) = issue { sum + count } else { sum }
                }
            }
            #expect(await again.wait(timeout: .seconds(20)) { _ in expired() >= 70 && again.events.count >= 10 })
            try await Task.sleep(for: .milliseconds(500))
            #expect(
                expired() == 70 && again.events.count == 10,
                "expired \(expired()), delivered \(again.events.count), deleted \(deleted)")
            for node in [restarted, publisher] { await node.stop() }
        }
    }
}
