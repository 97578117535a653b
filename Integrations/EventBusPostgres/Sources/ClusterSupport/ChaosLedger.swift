import EventBus
import EventBusPostgres
public import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// The chaos ledger: a receiver process (`ClusterPeer` with `PEER_LEDGER`) whose exactly-once
/// transactional handler inserts each event's number into a ledger table with no unique
/// constraint, killed with SIGKILL at random points and restarted, `cycles` times, while the events
/// are published; then one last run to the end. Every event must be in the ledger exactly once:
/// none lost, none twice, none stuck. The tests run a short one, the benchmark a long one.
///
/// ```swift
/// let report = try await ChaosLedger(url: url, peer: peerURL, events: 1_000, cycles: 20).run()
/// print(report.summary)   // "1000 events, 20 kills: 0 lost, 0 twice, 0 stuck, …"
/// ```
public struct ChaosLedger: Sendable {
    /// The database.
    public let url: DatabaseURL
    /// The `ClusterPeer` executable.
    public let peer: URL
    /// How many events are published.
    public let events: Int
    /// How many times the receiver is killed.
    public let cycles: Int
    /// A receiver is killed at a random time between 0 and this after it says it is ready.
    public var killWindow: Duration = .milliseconds(600)
    /// The receiver's lease (a killed holder's lease lapses after it): short, so that cycles are.
    public var leaseMilliseconds = 300
    /// How long each handler sleeps before its INSERT (a transaction in flight to be killed in).
    public var handlerDelayMilliseconds = 2
    /// The receiver's batch size.
    public var batchSize = 100
    /// How long the last run may take to bring the ledger to every event (else: stuck).
    public var finishTimeout: Duration = .seconds(60)

    /// A chaos run of `cycles` kills over `events` events, on a channel of its own.
    public init(url: DatabaseURL, peer: URL, events: Int, cycles: Int) {
        self.url = url
        self.peer = peer
        self.events = events
        self.cycles = cycles
    }

    /// What a run found.
    public struct Report: Sendable {
        /// Events published (each confirmed).
        public let events: Int
        /// Receiver processes killed with SIGKILL.
        public let kills: Int
        /// Events not in the ledger at the end.
        public let lost: Int
        /// Events in the ledger more than once (their extra rows).
        public let twice: Int
        /// Whether the last run failed to bring the ledger to every event in time.
        public let stuck: Bool
        /// Ledger rows written by the time of each kill (how far the receiver had come).
        public let rowsAtKills: [Int]
        /// How long the whole run took.
        public let duration: Duration
        /// How long the last receiver took to bring the ledger to every event.
        public let finish: Duration
        /// The dead letters of the ledger's consumer (none expected).
        public let deadLetters: Int

        /// One line of figures.
        public var summary: String {
            let progressed = zip(rowsAtKills, [0] + rowsAtKills).filter { $0 > $1 }.count
            return "\(events) events, \(kills) kills (SIGKILL at random points; the ledger grew between "
                + "\(progressed) of them): \(lost) lost, \(twice) twice, \(stuck ? "STUCK" : "0 stuck"), "
                + "\(deadLetters) dead letters; \(duration) in all, the last run finished in \(finish)"
        }
    }

    /// Runs it; throws only when the setup fails (a process that cannot start, the database).
    public func run() async throws -> Report {
        let started = ContinuousClock.now
        let channel = "chaos_" + UUID().uuidString.prefix(8).lowercased()
        let table = "ledger_\(channel)"
        let logger = Logger(label: "chaos", factory: { _ in SwiftLogNoOpLogHandler() })
        let publisher = try ClusterNode(
            name: "\(channel)_publisher", url: url, channel: channel, configuration: Self.durable("publisher"))
        publisher.bridge.register(ChaosPing.self, as: "test.ping.v1")
        try await publisher.start()
        try await publisher.client.query(
            PostgresQuery(
                unsafeSQL: "CREATE TABLE \(table) (n integer NOT NULL, tx xid8 DEFAULT pg_current_xact_id())"),
            logger: logger
        ).consume()
        var rowsAtKills: [Int] = []
        var publishing: Task<Void, any Error>?
        for _ in 0..<max(1, cycles) {
            let receiver = try PeerProcess(peer: peer, environment: environment(channel: channel, table: table))
            _ = await receiver.wait(timeout: .seconds(30)) { $0.contains("ready") }
            // The consumer's cursor exists once the first receiver is ready: publish from then on.
            publishing =
                publishing
                ?? Task {
                    for n in 1...events {
                        try await publisher.bridge.publish(ChaosPing(from: "p", n: n))
                        if n % 50 == 0 { try await Task.sleep(for: .milliseconds(5)) }
                    }
                }
            try await Task.sleep(for: killWindow * Double.random(in: 0...1))
            await receiver.kill()
            rowsAtKills.append(try await Self.rows(in: table, publisher.client))
        }
        try await publishing?.value
        let last = try PeerProcess(peer: peer, environment: environment(channel: channel, table: table))
        let finishStarted = ContinuousClock.now
        var stuck = true
        while ContinuousClock.now - finishStarted < finishTimeout {
            if try await Self.distinct(in: table, publisher.client) >= events {
                stuck = false
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let finish = ContinuousClock.now - finishStarted
        try await Task.sleep(for: .milliseconds(300))  // room for a second effect to show up
        await last.kill()
        let counts = try await Self.counts(in: table, publisher.client)
        let deadLetters = try await publisher.bridge.deadLetters(consumer: "ledger").count
        try await publisher.client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)"), logger: logger).consume()
        await publisher.stop()
        return Report(
            events: events, kills: rowsAtKills.count, lost: events - counts.distinct,
            twice: counts.rows - counts.distinct,
            stuck: stuck, rowsAtKills: rowsAtKills, duration: ContinuousClock.now - started, finish: finish,
            deadLetters: deadLetters)
    }

    private func environment(channel: String, table: String) -> [String: String] {
        [
            "PEER_CHANNEL": channel, "PEER_CONSUMER": "ledger", "PEER_LEDGER": table, "PEER_BATCH": String(batchSize),
            "PEER_LEASE_MS": String(leaseMilliseconds), "PEER_HANDLER_DELAY_MS": String(handlerDelayMilliseconds),
            "PEER_FIRE_POLL_MS": "60000",
        ]
    }

    private static func durable(_ consumer: String) -> PostgresEventBridge.Configuration {
        var settings = PostgresEventBridge.Configuration()
        settings.delivery = .durable(PostgresEventBridge.Durable(consumer: consumer))
        return settings
    }

    private static func rows(in table: String, _ client: PostgresClient) async throws -> Int {
        try await counts(in: table, client).rows
    }

    private static func distinct(in table: String, _ client: PostgresClient) async throws -> Int {
        try await counts(in: table, client).distinct
    }

    private static func counts(in table: String, _ client: PostgresClient) async throws -> (rows: Int, distinct: Int) {
        let rows = try await client.query(
            PostgresQuery(unsafeSQL: "SELECT count(*), count(DISTINCT n) FROM \(table)"),
            logger: Logger(label: "chaos", factory: { _ in SwiftLogNoOpLogHandler() }))
        var result = (rows: 0, distinct: 0)
        for try await (all, distinct) in rows.decode((Int64, Int64).self) { result = (Int(all), Int(distinct)) }
        return result
    }
}

/// The peer's event: `Ping` under the same wire name.
struct ChaosPing: Event, Codable {
    let from: String
    let n: Int
}

/// A `ClusterPeer` process and what it printed.
final class PeerProcess: Sendable {
    private let process = Process()
    private let output = NIOLockedValueBox("")
    private let pipe = Pipe()

    init(peer: URL, environment extra: [String: String]) throws {
        let output = self.output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let text = String(decoding: handle.availableData, as: UTF8.self)
            output.withLockedValue { $0 += text }
        }
        process.executableURL = peer
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { _, new in new }
        process.standardOutput = pipe
        try process.run()
    }

    /// Waits until `condition` holds for its output, `timeout` at most or until it exits.
    func wait(timeout: Duration, until condition: (String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !condition(output.withLockedValue { $0 }) {
            if !process.isRunning || ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// SIGKILL, then waits (10 s at most) for it to exit and stops reading its output.
    func kill() async {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        pipe.fileHandleForReading.readabilityHandler = nil
        try? pipe.fileHandleForReading.close()
    }
}

extension PostgresRowSequence {
    /// Reads the rows to the end.
    fileprivate func consume() async throws {
        for try await _ in self {}
    }
}
