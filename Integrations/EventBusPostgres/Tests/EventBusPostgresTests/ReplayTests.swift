import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("Replays to a restarted receiver, and the loss reports after them, with a shared key")
    struct ReplayTests {
        /// A shared key, and freshness limits short enough for a test to outwait.
        static func keyed(durable: Bool = false) -> PostgresEventBridge.Configuration {
            var settings = PostgresEventBridge.Configuration()
            settings.authenticationKey = Data(repeating: 9, count: 32)
            settings.maximumClockSkew = .milliseconds(200)
            settings.publishTimeout = .seconds(1)
            if durable { settings.delivery = .durable(PostgresEventBridge.Durable(consumer: "-")) }
            return settings
        }

        /// A started node named `name` on `channel` with `settings`, registering Ping (and Blob
        /// if `blob`).
        static func node(
            _ name: String, channel: String, _ settings: PostgresEventBridge.Configuration, blob: Bool = true,
            durable: Bool = false
        ) async throws -> ClusterNode {
            let node =
                durable
                ? try PostgresBridgeTests.durableNode(name, channel: channel, configuration: settings)
                : try ClusterNode(
                    name: "\(channel)_\(name)", url: PostgresBridgeTests.url, channel: channel, configuration: settings)
            node.bridge.register(Ping.self, as: "test.ping.v1")
            if blob { node.bridge.register(Blob.self, as: "test.blob.v1") }
            try await node.start()
            return node
        }

        /// Runs `body` while recording every NOTIFY payload on `channel` (LISTENing before `body`).
        static func capturing<T: Sendable>(
            _ channel: String, _ body: @Sendable (NIOLockedValueBox<[String]>) async throws -> T
        ) async throws -> T {
            let captured = NIOLockedValueBox<[String]>([])
            let listening = NIOLockedValueBox(false)
            let listener = Task {
                try await PostgresBridgeTests.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        listening.withLockedValue { $0 = true }
                        for try await notification in notifications {
                            captured.withLockedValue { $0.append(notification.payload) }
                        }
                    }
                }
            }
            defer { listener.cancel() }
            let deadline = ContinuousClock.now + .seconds(10)
            while !listening.withLockedValue({ $0 }) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            try #require(listening.withLockedValue { $0 }, "the capturing connection did not listen")
            return try await body(captured)
        }

        /// At most once: `a` publishes pings 1...3 to `b`; `b` stops and a new process of it
        /// starts; someone NOTIFYs `a`'s signed envelope of ping 1 again; `a` publishes ping 4.
        /// Returns what the new process received and reported.
        static func replayToRestartedReceiver() async throws -> (pings: [Ping], issues: [BridgeIssue]) {
            let channel = PostgresBridgeTests.uniqueChannel()
            let settings = keyed()
            let a = try await node("a", channel: channel, settings)
            let b = try await node("b", channel: channel, settings)
            let atB = Recorder(Ping.self, on: b.bus)
            let envelope = try await capturing(channel) { captured -> String? in
                for n in 1...3 { try await a.bridge.publish(Ping(from: "a", n: n)) }
                #expect(await atB.wait(forCount: 3))
                // The capturing connection gets its copy on its own time (it was missing 1 run in ~8 at load 8).
                let deadline = ContinuousClock.now + .seconds(5)
                while ContinuousClock.now < deadline {
                    if let first = captured.withLockedValue({ $0 }).first(where: { $0.contains(#""n":1}"#) }) {
                        return first
                    }
                    try await Task.sleep(for: .milliseconds(10))
                }
                return nil
            }
            await b.stop()
            try await Task.sleep(for: .milliseconds(1500))  // the restart takes longer than the tolerance
            let restarted = try await node("b", channel: channel, settings)
            let atRestarted = Recorder(Ping.self, on: restarted.bus)
            try await PostgresBridgeTests.rawNotify(try #require(envelope), on: channel)
            try await a.bridge.publish(Ping(from: "a", n: 4))
            #expect(await atRestarted.wait { $0.contains(Ping(from: "a", n: 4)) })
            try await Task.sleep(for: .milliseconds(200))  // room for a late delivery or report
            let result = (atRestarted.events, restarted.issues.events)
            for node in [restarted, a] { await node.stop() }
            return result
        }

        @Test(
            "at most once, a signed envelope replayed to a restarted receiver is refused as stale and reported, not delivered again"
        )
        func staleReplayRefused() async throws {
            let (pings, issues) = try await Self.replayToRestartedReceiver()
            #expect(pings == [Ping(from: "a", n: 4)], "delivered again: \(pings)")
            #expect(
                issues.contains { if case .stale = $0 { true } else { false } }, "not reported: \(issues)")
        }

        @Test("after a replay to a restarted receiver, the origin's next real event is not reported as missed")
        func noFalseLossAfterReplay() async throws {
            let (_, issues) = try await Self.replayToRestartedReceiver()
            let losses = issues.filter {
                switch $0 {
                case .missed, .missedUncounted: true
                default: false
                }
            }
            #expect(losses.isEmpty, "false loss reports: \(losses)")
        }

        @Test(
            "durable, an outbox envelope NOTIFYed to a restarted receiver is refused and reported: it takes events only from the outbox"
        )
        func durableReceiverIgnoresNotifiedEvents() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let settings = Self.keyed(durable: true)
            let a = try await Self.node("a", channel: channel, settings, durable: true)
            let b = try await Self.node("b", channel: channel, settings, durable: true)
            let atB = Recorder(Ping.self, on: b.bus)
            for n in 1...3 { try await a.bridge.publish(Ping(from: "a", n: n)) }
            #expect(await atB.wait(forCount: 3))
            try await Task.sleep(for: .milliseconds(300))  // b acknowledges its batch
            await b.stop()
            let envelope = try await PostgresBridgeTests.withConnection { connection in
                var payload: String?
                let query: PostgresQuery = """
                    SELECT payload FROM eventbus_outbox WHERE channel = \(channel) AND payload LIKE '%"n":1}%'
                    """
                for try await value in try await connection.query(query, logger: Logger(label: "tests"))
                    .decode(String.self)
                {
                    payload = value
                }
                return payload
            }
            let restarted = try await Self.node("b", channel: channel, settings, durable: true)
            let atRestarted = Recorder(Ping.self, on: restarted.bus)
            try await PostgresBridgeTests.rawNotify(try #require(envelope), on: channel)
            try await a.bridge.publish(Ping(from: "a", n: 4))
            #expect(await atRestarted.wait { $0.contains(Ping(from: "a", n: 4)) })
            try await Task.sleep(for: .milliseconds(300))
            let issues = restarted.issues.events
            for node in [restarted, a] { await node.stop() }
            #expect(atRestarted.events == [Ping(from: "a", n: 4)], "delivered again: \(atRestarted.events)")
            #expect(
                issues.contains { if case .notFromStore = $0 { true } else { false } }, "not reported: \(issues)")
            #expect(
                !issues.contains { if case .missed = $0 { true } else { false } }, "a false loss: \(issues)")
        }

        @Test(
            "a signed event of a type the receiver does not register is reported as unknownWireName, and its sequence recorded: the next event is not reported as missed"
        )
        func unknownWireNameIsNotALoss() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let settings = Self.keyed()
            let a = try await Self.node("a", channel: channel, settings)
            let b = try await Self.node("b", channel: channel, settings, blob: false)
            let atB = Recorder(Ping.self, on: b.bus)
            try await a.bridge.publish(Ping(from: "a", n: 1))
            try await a.bridge.publish(Blob(text: "not for b"))
            try await a.bridge.publish(Ping(from: "a", n: 2))
            #expect(await atB.wait(forCount: 2))
            try await Task.sleep(for: .milliseconds(200))
            let issues = b.issues.events
            for node in [a, b] { await node.stop() }
            #expect(
                issues.map(\.description) == [
                    BridgeIssue.unknownWireName("test.blob.v1", origin: a.bridge.origin).description
                ])
        }
    }
}
