import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import PostgresNIO
import Testing

/// Every test that needs the database, nested in one serialized suite: the restart and
/// terminate tests would disturb tests running beside them. Skipped, with this reason, when
/// EVENTBUS_POSTGRES_URL is not set (run them with scripts/with-postgres.sh; CI fails on a skip).
@Suite(
    "PostgreSQL bridge, against a real server",
    .serialized,
    .enabled(
        if: DatabaseURL.fromEnvironment != nil,
        "EVENTBUS_POSTGRES_URL is not set: run Integrations/EventBusPostgres/scripts/with-postgres.sh"),
    .timeLimit(.minutes(3))
)
struct PostgresBridgeTests {
    static var url: DatabaseURL {
        // Only reached when the suite is enabled, i.e. when the URL is set and valid.
        DatabaseURL.fromEnvironment ?? DatabaseURL("postgres://unset@127.0.0.1/unset")!
    }

    /// A channel no other test uses.
    static func uniqueChannel() -> String {
        "t_" + UUID().uuidString.prefix(8).lowercased().replacingOccurrences(of: "-", with: "")
    }

    /// Runs `body` with one started node per name, all on one fresh channel (or `channel`) with
    /// Ping, RoomMessage and Blob registered; stops them afterwards, whatever happens. `durable`:
    /// each node consumes durably under its own name (``durableNode(_:channel:configuration:)``).
    static func withNodes(
        _ names: [String],
        configuration: PostgresEventBridge.Configuration = PostgresEventBridge.Configuration(),
        durable: Bool = false,
        channel: String = uniqueChannel(),
        _ body: ([ClusterNode]) async throws -> Void
    ) async throws {
        let nodes = try names.map { name in
            durable
                ? try durableNode(name, channel: channel, configuration: configuration)
                : try ClusterNode(name: "\(channel)_\(name)", url: url, channel: channel, configuration: configuration)
        }
        for node in nodes {
            node.bridge.register(Ping.self, as: "test.ping.v1")
            node.bridge.register(RoomMessage.self, as: "test.room-message.v1")
            node.bridge.register(Blob.self, as: "test.blob.v1")
        }
        do {
            for node in nodes { try await node.start() }
            try await body(nodes)
        } catch {
            for node in nodes { await node.stop() }
            throw error
        }
        for node in nodes { await node.stop() }
    }

    /// A node (not started) named `name` on `channel` whose bridge consumes durably as consumer
    /// `name` (the same consumer again for the same name), with `configuration`'s other settings.
    static func durableNode(
        _ name: String, channel: String,
        configuration: PostgresEventBridge.Configuration = PostgresEventBridge.Configuration()
    ) throws -> ClusterNode {
        var durable = PostgresEventBridge.Durable(consumer: name)
        if case .durable(let given) = configuration.delivery { durable = given }
        durable.consumer = name
        var settings = configuration
        settings.delivery = .durable(durable)
        return try ClusterNode(name: "\(channel)_\(name)", url: url, channel: channel, configuration: settings)
    }

    /// A node named "cleaner" with `configuration`'s durable settings but a retention of `count`
    /// rows: the outbox cleaner the retention tests run by hand (`cleanUpOutbox()`).
    static func cleaner(
        channel: String, configuration: PostgresEventBridge.Configuration, keeping count: Int
    ) throws -> ClusterNode {
        var settings = configuration
        if case .durable(var durable) = settings.delivery {
            durable.retentionCount = count
            settings.delivery = .durable(durable)
        }
        return try durableNode("cleaner", channel: channel, configuration: settings)
    }

    /// Publishes `ping` from `node` in a transaction that then rolls back (expecting the error it
    /// is rolled back with, which postgres-nio wraps in a `PostgresTransactionError`).
    static func publishRolledBack(_ ping: Ping, from node: ClusterNode) async {
        struct Abort: Error {}
        await #expect(throws: PostgresTransactionError.self) {
            try await node.client.withTransaction(logger: Logger(label: "tests")) { connection in
                try await node.bridge.publish(ping, in: connection)
                throw Abort()
            }
        }
    }

    /// Runs `body` with two started nodes, "a" and "b", and a recorder of the Pings each receives;
    /// `durable`: both consume durably.
    static func withPingPair(
        durable: Bool = false,
        _ body: (ClusterNode, ClusterNode, Recorder<Ping>, Recorder<Ping>) async throws -> Void
    ) async throws {
        try await withNodes(["a", "b"], durable: durable) { nodes in
            let (a, b) = (nodes[0], nodes[1])
            try await body(a, b, Recorder(Ping.self, on: a.bus), Recorder(Ping.self, on: b.bus))
        }
    }

    /// Runs `body` with a plain connection of its own (for raw NOTIFYs and server queries).
    @discardableResult
    static func withConnection<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await PostgresConnection.connect(
            configuration: url.connectionConfiguration(applicationName: "eventbus-tests-raw"), id: 1,
            logger: Logger(label: "tests"))
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Sends `payload` on `channel` as an outsider would.
    static func rawNotify(_ payload: String, on channel: String) async throws {
        try await withConnection { connection in
            // Read to the end: a server error arrives after the row description.
            let rows = try await connection.query(
                "SELECT pg_notify(\(channel), \(payload))", logger: Logger(label: "tests"))
            for try await _ in rows {}
        }
    }

    /// Runs the server command in environment variable `variable` (set by with-postgres.sh:
    /// EVENTBUS_POSTGRES_RESTART, _KILL or _START) and waits for it, 60 s at most; returns whether
    /// it succeeded.
    static func serverCommand(_ variable: String) async throws -> Bool {
        let command = try #require(
            ProcessInfo.processInfo.environment[variable], "\(variable) is not set: run scripts/with-postgres.sh")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        return !process.isRunning && process.terminationStatus == 0
    }

    /// The backend process ids of the sessions named `applicationName`.
    static func backendPIDs(of applicationName: String) async throws -> [Int32] {
        try await withConnection { connection in
            var pids: [Int32] = []
            let rows = try await connection.query(
                "SELECT pid FROM pg_stat_activity WHERE application_name = \(applicationName)",
                logger: Logger(label: "tests"))
            for try await pid in rows.decode(Int32.self) { pids.append(pid) }
            return pids
        }
    }
}

extension BridgeStatus {
    var isListening: Bool { if case .listening = self { true } else { false } }
    var isInterrupted: Bool { if case .interrupted = self { true } else { false } }
    var isResumed: Bool { if case .resumed = self { true } else { false } }
    var isStopped: Bool { if case .stopped = self { true } else { false } }
}
