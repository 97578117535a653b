import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("Scheduled events: fired once, when due by the database's clock, cancellable")
    struct ScheduleTests {
        /// Settings of a durable node whose firer runs (`fires`) every 20 ms, `batch` rows at a
        /// time, with the database's clock moved `ahead`.
        static func settings(fires: Bool, ahead: Duration = .zero, batch: Int = 500)
            -> PostgresEventBridge.Configuration
        {
            var durable = PostgresEventBridge.Durable(consumer: "-")
            durable.pollInterval = .milliseconds(50)
            durable.cleanupInterval = .seconds(3600)
            durable.scheduling.firesEvents = fires
            durable.scheduling.pollInterval = .milliseconds(20)
            durable.scheduling.batchSize = batch
            durable.scheduling.clockOffset = ahead
            var settings = PostgresEventBridge.Configuration()
            settings.delivery = .durable(durable)
            return settings
        }

        /// A started durable node `name` on `channel` (Ping registered).
        static func node(_ name: String, channel: String, fires: Bool, ahead: Duration = .zero, batch: Int = 500)
            async throws -> ClusterNode
        {
            let node = try PostgresBridgeTests.durableNode(
                name, channel: channel, configuration: settings(fires: fires, ahead: ahead, batch: batch))
            node.bridge.register(Ping.self, as: "test.ping.v1")
            try await node.start()
            return node
        }

        /// The single value `query` returns.
        static func scalar<T: PostgresDecodable & Sendable>(_ type: T.Type, _ query: PostgresQuery) async throws -> T? {
            try await PostgresBridgeTests.withConnection { connection in
                var value: T?
                for try await row in try await connection.query(query, logger: Logger(label: "tests")).decode(T.self) {
                    value = row
                }
                return value
            }
        }

        /// The outbox rows of `channel`, by the origin that sealed them.
        static func firedByOrigin(_ channel: String) async throws -> [String: Int] {
            try await PostgresBridgeTests.withConnection { connection in
                var counts: [String: Int] = [:]
                let query: PostgresQuery = """
                    SELECT substring(payload from '"o":"([^"]+)"'), count(*) FROM eventbus_outbox
                    WHERE channel = \(channel) GROUP BY 1
                    """
                for try await (origin, count) in try await connection.query(query, logger: Logger(label: "tests"))
                    .decode((String, Int64).self)
                {
                    counts[origin] = Int(count)
                }
                return counts
            }
        }

        /// The resident memory of this process, in bytes.
        static func residentBytes() -> Int {
            guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
            let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        }

        @Test(
            "fires when due by the database's clock (driven ahead), not before; delivered once everywhere, the firer included"
        )
        func firesWhenDue() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let a = try await Self.node("a", channel: channel, fires: false)
            let atA = Recorder(Ping.self, on: a.bus)
            let b = try await Self.node("b", channel: channel, fires: false)
            let atB = Recorder(Ping.self, on: b.bus)
            let handle = try await a.bridge.publish(Ping(from: "a", n: 1), after: .seconds(3600))
            #expect(atA.events.isEmpty, "nothing is dispatched locally when scheduling")
            // One minute before it is due: nothing fires.
            #expect(try await b.bridge.fireScheduledEvents(lookingAhead: .seconds(3540)) == 0)
            try await Task.sleep(for: .milliseconds(300))
            #expect(atA.events.isEmpty && atB.events.isEmpty, "delivered before it was due")
            // A second after: it fires, sealed by b, delivered once to a and to b.
            #expect(try await b.bridge.fireScheduledEvents(lookingAhead: .seconds(3601)) == 1)
            #expect(await atA.wait(forCount: 1))
            #expect(await atB.wait(forCount: 1))
            #expect(try await a.bridge.cancel(handle) == .alreadyFired)
            #expect(try await b.bridge.fireScheduledEvents(lookingAhead: .seconds(7200)) == 0, "fired twice")

            // A running firer, its clock 2 h ahead, fires within its poll interval what is due within
            // the hour; a date in the past fires at once.
            let c = try await Self.node("c", channel: channel, fires: true, ahead: .seconds(7200))
            _ = try await a.bridge.publish(Ping(from: "a", n: 2), after: .seconds(3600))
            _ = try await a.bridge.publish(Ping(from: "a", n: 3), at: Date(timeIntervalSinceNow: -60))
            #expect(await atB.wait(forCount: 3), "\(atB.events)")
            try await Task.sleep(for: .milliseconds(300))  // room for a duplicate
            #expect(atA.events.map(\.n).sorted() == [1, 2, 3] && atB.events.map(\.n).sorted() == [1, 2, 3])
            #expect(try await Self.firedByOrigin(channel)[c.bridge.origin.uuidString] == 2)
            for node in [c, b, a] { await node.stop() }
        }

        @Test(
            "lateness by the database's clock: 100 events due over 1 s, a firer polling every 100 ms, each fired within the poll interval plus a pass (1 s allowed on a loaded machine)"
        )
        func lateness() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            var settings = Self.settings(fires: true)
            if case .durable(var durable) = settings.delivery {
                durable.scheduling.pollInterval = .milliseconds(100)
                settings.delivery = .durable(durable)
            }
            let firer = try PostgresBridgeTests.durableNode("firer", channel: channel, configuration: settings)
            firer.bridge.register(Ping.self, as: "test.ping.v1")
            try await firer.start()
            let received = Recorder(Ping.self, on: firer.bus)
            let total = 100
            for n in 1...total {
                try await firer.bridge.publish(Ping(from: "firer", n: n), after: .milliseconds(200 + 10 * n))
            }
            #expect(await received.wait(timeout: .seconds(20)) { $0.count >= total })
            try await Task.sleep(for: .milliseconds(300))
            #expect(received.events.count == total, "\(received.events.count) of \(total)")
            let query: PostgresQuery = """
                SELECT (extract(epoch FROM min(fired_at - due_at)) * 1000)::float8,
                    (extract(epoch FROM percentile_cont(0.5) WITHIN GROUP (ORDER BY fired_at - due_at)) * 1000)::float8,
                    (extract(epoch FROM max(fired_at - due_at)) * 1000)::float8
                FROM eventbus_schedule WHERE channel = \(channel)
                """
            let (early, median, late) = try await PostgresBridgeTests.withConnection { connection in
                var figures = (Double.nan, Double.nan, Double.nan)
                for try await row in try await connection.query(query, logger: Logger(label: "tests"))
                    .decode((Double, Double, Double).self)
                {
                    figures = row
                }
                return figures
            }
            #expect(early >= 0, "fired \(-early) ms before it was due")
            #expect(late < 1_000, "fired \(late) ms late with a 100 ms poll")
            print(
                String(
                    format:
                        "bridge: schedule, lateness with a 100 ms poll, %d events: min %.1f ms, p50 %.1f ms, max %.1f ms (database clock)",
                    total, early, median, late))
            await firer.stop()
        }

        @Test(
            "a cancel before firing wins: never delivered; again: already cancelled; unknown ids; at most once refuses")
        func cancelBeforeFiring() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let a = try await Self.node("a", channel: channel, fires: false)
            let atA = Recorder(Ping.self, on: a.bus)
            let handle = try await a.bridge.publish(Ping(from: "a", n: 1), after: .seconds(60))
            #expect(try await a.bridge.cancel(handle) == .cancelled)
            #expect(try await a.bridge.cancel(handle) == .alreadyCancelled)
            #expect(try await a.bridge.fireScheduledEvents(lookingAhead: .seconds(3600)) == 0)
            #expect(try await a.bridge.cancel(.init(uuid: UUID())) == .unknown)
            try await Task.sleep(for: .milliseconds(300))
            #expect(atA.events.isEmpty, "a cancelled event was delivered")
            await a.stop()

            try await PostgresBridgeTests.withNodes(["plain"]) { nodes in
                await #expect(throws: PostgresEventBridgeError.self) {
                    try await nodes[0].bridge.publish(Ping(from: "plain", n: 1), after: .seconds(1))
                }
                await #expect(throws: PostgresEventBridgeError.self) {
                    try await nodes[0].bridge.cancel(handle)
                }
            }
        }

        @Test(
            "a cancel racing the firer, 200 rounds: exactly one wins each time, and the event is delivered exactly when the firer won"
        )
        func cancelRacingTheFirer() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let a = try await Self.node("a", channel: channel, fires: false)
            let b = try await Self.node("b", channel: channel, fires: false)
            let atB = Recorder(Ping.self, on: b.bus)
            let rounds = 200
            var fired: Set<Int> = []
            var cancelled: Set<Int> = []
            for n in 1...rounds {
                let handle = try await a.bridge.publish(Ping(from: "a", n: n), after: .seconds(3600))
                async let firing = b.bridge.fireScheduledEvents(lookingAhead: .seconds(7200))
                if n % 2 == 0 { try await Task.sleep(for: .microseconds(Int.random(in: 0...800))) }
                let outcome = try await a.bridge.cancel(handle)
                let taken = try await firing
                switch outcome {
                case .cancelled:
                    cancelled.insert(n)
                    #expect(taken == 0, "round \(n): cancelled, yet the firer took it")
                case .alreadyFired:
                    fired.insert(n)
                default:
                    Issue.record("round \(n): \(outcome)")
                }
            }
            #expect(fired.count + cancelled.count == rounds)
            #expect(await atB.wait(timeout: .seconds(20)) { Set($0.map(\.n)).count >= fired.count })
            try await Task.sleep(for: .milliseconds(300))  // room for a duplicate or a cancelled one
            let delivered = atB.events.map(\.n)
            #expect(Set(delivered) == fired, "delivered \(delivered.count), the firer won \(fired.count)")
            #expect(delivered.count == Set(delivered).count, "delivered twice")
            let both = try await Self.scalar(
                Int64.self,
                "SELECT count(*) FROM eventbus_schedule WHERE channel = \(channel) AND fired_at IS NOT NULL AND cancelled_at IS NOT NULL"
            )
            #expect(both == 0)
            print(
                "bridge: schedule, cancel racing the firer: \(rounds) rounds, firer won \(fired.count), cancel won \(cancelled.count), delivered \(delivered.count), both 0"
            )
            await b.stop()
            await a.stop()
        }

        @Test(
            "two instances' firers on one schedule (2,000 due at once): each row fired exactly once, counted in a receiver; both fired"
        )
        func twoFirers() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let receiver = try await Self.node("receiver", channel: channel, fires: false)
            let received = Recorder(Ping.self, on: receiver.bus)
            let total = 2_000
            for n in 1...total { _ = try await receiver.bridge.publish(Ping(from: "s", n: n), after: .seconds(3600)) }
            // Both firers start with everything due (their clocks 2 h ahead), batches of 50.
            async let startA = Self.node("a", channel: channel, fires: true, ahead: .seconds(7200), batch: 50)
            async let startB = Self.node("b", channel: channel, fires: true, ahead: .seconds(7200), batch: 50)
            let (a, b) = try await (startA, startB)
            let all = await received.wait(timeout: .seconds(60)) { $0.count >= total }
            try await Task.sleep(for: .milliseconds(500))  // room for a duplicate
            let numbers = received.events.map(\.n)
            #expect(all, "received \(numbers.count) of \(total)")
            #expect(
                numbers.count == total && Set(numbers) == Set(1...total),
                "\(numbers.count) received, \(Set(numbers).count) distinct")
            let byOrigin = try await Self.firedByOrigin(channel)
            let (firedA, firedB) = (
                byOrigin[a.bridge.origin.uuidString] ?? 0, byOrigin[b.bridge.origin.uuidString] ?? 0
            )
            #expect(firedA + firedB == total && byOrigin.count == 2, "\(byOrigin)")
            print(
                "bridge: schedule, two firers: \(total) due at once, a fired \(firedA), b fired \(firedB), received \(numbers.count), distinct \(Set(numbers).count)"
            )
            for node in [a, b, receiver] { await node.stop() }
        }

        @Test(
            "a firer process killed (kill -9) mid-way: another instance takes over, every row fired once, none lost, none twice"
        )
        func firerKilled() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let receiver = try await Self.node("receiver", channel: channel, fires: false)
            let received = Recorder(Ping.self, on: receiver.bus)
            let total = 1_000
            for n in 1...total { _ = try await receiver.bridge.publish(Ping(from: "s", n: n), after: .seconds(3600)) }
            // Each outbox row of this channel takes 2 ms to insert: a batch of 50 is a transaction
            // in flight for 100 ms, where the kill lands.
            try await PostgresBridgeTests.withConnection { connection in
                let logger = Logger(label: "tests")
                try await connection.query(
                    """
                    CREATE OR REPLACE FUNCTION eventbus_test_slow() RETURNS trigger LANGUAGE plpgsql AS
                    $$ BEGIN PERFORM pg_sleep(0.002); RETURN NEW; END $$
                    """, logger: logger
                ).consume()
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            CREATE TRIGGER slow_\(channel) BEFORE INSERT ON eventbus_outbox FOR EACH ROW
                            WHEN (NEW.channel = '\(channel)') EXECUTE FUNCTION eventbus_test_slow()
                            """), logger: logger
                ).consume()
            }
            let peer = try DurableTests.DurableReceiverProcess(
                channel: channel, consumer: "peer", batch: 500,
                extra: ["PEER_FIRE_POLL_MS": "20", "PEER_FIRE_BATCH": "50", "PEER_FIRE_AHEAD_S": "7200"])
            #expect(await peer.wait { $0.lines.contains("ready") }, "\(peer.lines)")
            #expect(await received.wait(timeout: .seconds(60)) { $0.count >= 300 })
            // Killed while a firing transaction is in flight: its INSERT into the outbox running.
            let deadline = ContinuousClock.now + .seconds(10)
            var inFlight = false
            while !inFlight && ContinuousClock.now < deadline {
                inFlight =
                    try await Self.scalar(
                        Int64.self,
                        """
                        SELECT count(*) FROM pg_stat_activity
                        WHERE state = 'active' AND query LIKE '%INSERT INTO eventbus_outbox%' AND backend_xid IS NOT NULL
                        """) ?? 0 > 0
            }
            await peer.stop()
            #expect(inFlight, "no firing transaction in flight when killed")
            let firedAtKill = try await Self.scalar(
                Int64.self, "SELECT count(*) FROM eventbus_schedule WHERE channel = \(channel) AND fired_at IS NOT NULL"
            )
            let takeover = try await Self.node(
                "takeover", channel: channel, fires: true, ahead: .seconds(7200), batch: 50)
            let all = await received.wait(timeout: .seconds(60)) { $0.count >= total }
            try await Task.sleep(for: .milliseconds(500))  // room for a duplicate
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query(
                    PostgresQuery(unsafeSQL: "DROP TRIGGER slow_\(channel) ON eventbus_outbox"),
                    logger: Logger(label: "tests")
                ).consume()
            }
            let numbers = received.events.map(\.n)
            let byOrigin = try await Self.firedByOrigin(channel)
            #expect(all, "received \(numbers.count) of \(total)")
            #expect(
                numbers.count == total && Set(numbers) == Set(1...total),
                "\(numbers.count) received, \(Set(numbers).count) distinct")
            #expect(byOrigin.values.reduce(0, +) == total, "\(byOrigin)")
            let firedByTakeover = byOrigin[takeover.bridge.origin.uuidString] ?? 0
            #expect((firedAtKill ?? 0) < total && firedByTakeover > 0, "killed at \(firedAtKill ?? -1) of \(total)")
            print(
                "bridge: schedule, firer killed (kill -9) mid-transaction (in flight: \(inFlight)) after \(firedAtKill ?? -1) of \(total) fired: the other instance fired \(firedByTakeover), received \(numbers.count), distinct \(Set(numbers).count), lost \(total - Set(numbers).count), twice \(numbers.count - Set(numbers).count)"
            )
            await takeover.stop()
            await receiver.stop()
        }

        @Test(
            "with a key, a row written without it (or altered) is refused when due: never delivered, reported, and cancel says so"
        )
        func forgedRowRefused() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            var settings = Self.settings(fires: false)
            settings.authenticationKey = Data(repeating: 7, count: 32)
            let a = try PostgresBridgeTests.durableNode("a", channel: channel, configuration: settings)
            a.bridge.register(Ping.self, as: "test.ping.v1")
            try await a.start()
            let atA = Recorder(Ping.self, on: a.bus)
            let real = try await a.bridge.publish(Ping(from: "a", n: 1), after: .seconds(60))
            let forged = UUID()
            try await PostgresBridgeTests.withConnection { connection in
                let logger = Logger(label: "tests")
                try await connection.query(
                    """
                    INSERT INTO eventbus_schedule (id, channel, due_at, wire_name, payload)
                    VALUES (\(forged), \(channel), now(), 'test.ping.v1', '{"from":"forger","n":666}')
                    """, logger: logger
                ).consume()
                // A copy of the real row under another id: its MAC binds the id.
                try await connection.query(
                    """
                    INSERT INTO eventbus_schedule (id, channel, due_at, wire_name, payload, mac)
                    SELECT gen_random_uuid(), channel, due_at, wire_name, payload, mac FROM eventbus_schedule
                    WHERE id = \(real.uuid)
                    """, logger: logger
                ).consume()
            }
            #expect(try await a.bridge.fireScheduledEvents(lookingAhead: .seconds(120)) == 3)
            #expect(await atA.wait(forCount: 1))
            try await Task.sleep(for: .milliseconds(300))
            #expect(atA.events == [Ping(from: "a", n: 1)], "\(atA.events)")
            let refusals = a.issues.events.filter { if case .unauthenticated = $0 { true } else { false } }
            #expect(refusals.count == 2, "\(a.issues.events)")
            guard case .refused = try await a.bridge.cancel(.init(uuid: forged)) else {
                Issue.record("the forged row was not marked refused")
                return
            }
            #expect(try await a.bridge.cancel(real) == .alreadyFired)
            await a.stop()
        }

        @Test("100,000 pending rows cost the firing instance no memory; 10,000 due fire in batches without growth")
        func pendingCostNoMemory() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let receiver = try await Self.node("receiver", channel: channel, fires: false)
            let count = NIOLockedValueBox(0)
            let token = receiver.bus.on(Ping.self).next { _ in count.withLockedValue { $0 += 1 } }
            let a = try await Self.node("a", channel: channel, fires: true)
            _ = try await a.bridge.publish(Ping(from: "warm-up", n: 0), after: .zero)
            #expect(await receiver.issues.wait(timeout: .seconds(10)) { _ in count.withLockedValue { $0 } == 1 })
            try await Task.sleep(for: .seconds(1))
            let before = Self.residentBytes()
            let pending = 100_000
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query(
                    """
                    INSERT INTO eventbus_schedule (id, channel, due_at, wire_name, payload)
                    SELECT gen_random_uuid(), \(channel), now() + interval '1 day', 'test.ping.v1',
                        '{"from":"bulk","n":' || g || '}'
                    FROM generate_series(1, \(pending)) AS g
                    """, logger: Logger(label: "tests")
                ).consume()
            }
            // The firer looks every 20 ms: some 50 passes over 100,000 pending rows.
            let clock = ContinuousClock()
            let passStart = clock.now
            #expect(try await a.bridge.fireScheduledEvents() == 0)
            let pass = clock.now - passStart
            try await Task.sleep(for: .seconds(1))
            let withPending = Self.residentBytes()
            // 10,000 of them due now: fired 500 per transaction.
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query(
                    """
                    UPDATE eventbus_schedule SET due_at = now() - interval '1 second'
                    WHERE channel = \(channel) AND substring(payload from '"n":([0-9]+)')::int <= 10000
                    """, logger: Logger(label: "tests")
                ).consume()
            }
            let fired = await receiver.issues.wait(timeout: .seconds(60)) { _ in count.withLockedValue { $0 } >= 10_001
            }
            let afterFiring = Self.residentBytes()
            token.dispose()
            #expect(fired, "received \(count.withLockedValue { $0 } - 1) of 10,000")
            let mib = { (bytes: Int) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
            #expect(withPending - before < 16 * 1_048_576, "\(mib(withPending - before)) more with \(pending) pending")
            #expect(afterFiring - before < 32 * 1_048_576, "\(mib(afterFiring - before)) more after firing 10,000")
            print(
                "bridge: schedule, memory: resident \(mib(before)) before, \(mib(withPending)) with \(pending) pending "
                    + "(\(mib(withPending - before)) more), \(mib(afterFiring)) after 10,000 fired and received "
                    + "(\(mib(afterFiring - before)) more); a firing pass over \(pending) pending, none due: \(pass)")
            await a.stop()
            await receiver.stop()
        }
    }
}
