public import EventBus
public import EventBusPostgres
import NIOConcurrencyHelpers
public import PostgresNIO

/// One app instance in miniature: a bus, a PostgreSQL client and a bridge, running. For the tests,
/// the peer process and the benchmark (the demo shows the same with a `ServiceGroup`).
///
/// ```swift
/// let node = try ClusterNode(name: "a", url: url, channel: "app_events")
/// try await node.start()
/// defer { Task { await node.stop() } }
/// ```
public final class ClusterNode: Sendable {
    /// The node's name, also its listening connection's `application_name`.
    public let name: String
    /// The node's own bus, where the bridge dispatches.
    public let bus: EventBus
    /// The pool the bridge publishes through; run by ``start(timeout:)``.
    public let client: PostgresClient
    /// The node's bridge; run by ``start(timeout:)``.
    public let bridge: PostgresEventBridge
    /// Every status the bridge reported, in order.
    public let statuses: Recorder<BridgeStatus>
    /// Every issue the bridge reported, in order.
    public let issues: Recorder<BridgeIssue>
    private let tasks = NIOLockedValueBox<(client: Task<Void, Never>?, bridge: Task<Void, any Error>?)>((nil, nil))

    /// A node named `name` (its listening connection's `application_name`) on `channel`.
    public init(
        name: String, url: DatabaseURL, channel: String,
        configuration: PostgresEventBridge.Configuration = PostgresEventBridge.Configuration()
    ) throws {
        self.name = name
        bus = EventBus()
        client = PostgresClient(configuration: url.clientConfiguration())
        bridge = try PostgresEventBridge(
            bus: bus, listenConfiguration: url.connectionConfiguration(applicationName: name), client: client,
            channel: channel, configuration: configuration)
        statuses = Recorder(BridgeStatus.self, on: bus)
        issues = Recorder(BridgeIssue.self, on: bus)
    }

    /// Runs the client and the bridge; returns once the bridge listens, or throws after `timeout`.
    public func start(timeout: Duration = .seconds(20)) async throws {
        let client = self.client
        let bridge = self.bridge
        tasks.withLockedValue {
            $0 = (Task { await client.run() }, Task { try await bridge.run() })
        }
        let listening = await statuses.wait(timeout: timeout) { statuses in
            statuses.contains { if case .listening = $0 { true } else { false } }
        }
        if !listening { throw ClusterNodeError.notListening(name: name, statuses: statuses.events) }
    }

    /// Stops the bridge (waiting for it to close its connection), then the client.
    public func stop() async {
        let (clientTask, bridgeTask) = tasks.withLockedValue { tasks in
            defer { tasks = (nil, nil) }
            return tasks
        }
        bridgeTask?.cancel()
        _ = await bridgeTask?.result
        clientTask?.cancel()
        await clientTask?.value
    }
}

/// Why a ``ClusterNode`` did not start.
public enum ClusterNodeError: Error, CustomStringConvertible {
    /// The bridge did not report `.listening` in time; `statuses` are what it reported.
    case notListening(name: String, statuses: [BridgeStatus])

    /// One line for test output.
    public var description: String {
        switch self {
        case .notListening(let name, let statuses):
            return "\(name) did not start listening in time; statuses: \(statuses)"
        }
    }
}
