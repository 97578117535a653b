// Effects exactly once (BENCH_EXACTLY_ONCE=1): the throughput of a consumer whose transactional
// handler inserts each event into a ledger table, beside a plain durable consumer's, both reading
// the same backlog of BENCH_EVENTS events (default 5,000) in the same run; how long such
// transactions hold back another durable reader (pg_snapshot_xmin); then the full chaos ledger:
// BENCH_CHAOS_CYCLES (default 100) kills with SIGKILL of a receiver process at random points over
// BENCH_CHAOS_EVENTS (default 5,000) events. ClusterPeer must be built beside the benchmark:
//
//   Integrations/EventBusPostgres/scripts/with-postgres.sh bash -c \
//       'swift build -c release --package-path Integrations/EventBusPostgres &&
//        BENCH_EXACTLY_ONCE=1 Integrations/EventBusPostgres/.build/release/EventBusPostgresBenchmark'
import ClusterSupport
import Dispatch
import EventBus
import EventBusPostgres
import Foundation
import Logging
import PostgresNIO

/// The database to run the exactly-once mode on, when BENCH_EXACTLY_ONCE is set (and the URL).
func exactlyOnceMode() -> DatabaseURL? {
    ProcessInfo.processInfo.environment["BENCH_EXACTLY_ONCE"] == nil ? nil : DatabaseURL.fromEnvironment
}

/// Runs the exactly-once measurements and the full chaos ledger; exits 1 if the ledger is wrong.
func runExactlyOnceBenchmark(url: DatabaseURL) async throws {
    let environment = ProcessInfo.processInfo.environment
    let count = Int(environment["BENCH_EVENTS"] ?? "") ?? 5_000
    try await measureExactlyOnceThroughput(url: url, count: count)
    try await measureSnapshotHold(url: url)
    let peer =
        environment["EVENTBUS_CLUSTER_PEER"].map { URL(fileURLWithPath: $0) }
        ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("ClusterPeer")
    guard FileManager.default.isExecutableFile(atPath: peer.path) else {
        print("chaos ledger: no ClusterPeer at \(peer.path): build the package first (swift build -c release)")
        exit(1)
    }
    let chaos = ChaosLedger(
        url: url, peer: peer, events: Int(environment["BENCH_CHAOS_EVENTS"] ?? "") ?? 5_000,
        cycles: Int(environment["BENCH_CHAOS_CYCLES"] ?? "") ?? 100)
    let report = try await chaos.run()
    print("chaos ledger: \(report.summary)")
    if report.lost > 0 || report.twice > 0 || report.stuck || report.deadLetters > 0 { exit(1) }
}

/// A durable node of `consumer` on `channel`, Payload registered.
private func benchNode(_ consumer: String, channel: String, url: DatabaseURL) throws -> ClusterNode {
    var settings = PostgresEventBridge.Configuration()
    settings.publishBufferCapacity = 100_000
    settings.delivery = .durable(PostgresEventBridge.Durable(consumer: consumer))
    let node = try ClusterNode(name: "\(channel)_\(consumer)", url: url, channel: channel, configuration: settings)
    node.bridge.register(Payload.self, as: "bench.payload.v1")
    return node
}

/// Publishes `count` 1 KiB events from 16 tasks.
private func publishBacklog(_ sender: ClusterNode, count: Int) async throws {
    let body = String(repeating: "x", count: 1_024)
    try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<16 {
            group.addTask {
                for _ in stride(from: task, to: count, by: 16) {
                    try await sender.bridge.publish(Payload(sentAt: DispatchTime.now().uptimeNanoseconds, body: body))
                }
            }
        }
        try await group.waitForAll()
    }
}

/// A backlog of `count` events read by a plain durable consumer, then by one whose transactional
/// handler inserts each into a ledger table: events per second of each.
private func measureExactlyOnceThroughput(url: DatabaseURL, count: Int) async throws {
    let channel = "bench_" + String(UUID().uuidString.prefix(8)).lowercased()
    let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
    let sender = try benchNode("sender", channel: channel, url: url)
    try await sender.start()
    let table = "ledger_\(channel)"
    try await sender.client.query(
        PostgresQuery(unsafeSQL: "CREATE TABLE \(table) (sent_at bigint NOT NULL)"), logger: logger
    ).consume()
    // Both consumers' cursors exist before the backlog.
    for consumer in ["plain", "exactly"] {
        let node = try benchNode(consumer, channel: channel, url: url)
        try await node.start()
        await node.stop()
    }
    try await publishBacklog(sender, count: count)

    let plain = try benchNode("plain", channel: channel, url: url)
    let received = Recorder(Payload.self, on: plain.bus)
    var start = ContinuousClock.now
    try await plain.start()
    guard try await waitForCursor("plain", atEndOf: channel, sender.client) else {
        print("exactly once: the plain consumer did not reach the end of the backlog")
        exit(1)
    }
    let plainRate = Double(count) / seconds(start.duration(to: .now))
    await plain.stop()

    let exactly = try benchNode("exactly", channel: channel, url: url)
    let insert = "INSERT INTO \(table) (sent_at) VALUES ($1)"
    try exactly.bridge.process(Payload.self) { payload, connection in
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(Int64(bitPattern: payload.sentAt))
        try await connection.query(PostgresQuery(unsafeSQL: insert, binds: bindings), logger: logger).consume()
    }
    let dispatched = Recorder(Payload.self, on: exactly.bus)
    start = ContinuousClock.now
    try await exactly.start()
    guard try await waitForCursor("exactly", atEndOf: channel, sender.client) else {
        print("exactly once: the processing consumer did not reach the end of the backlog")
        exit(1)
    }
    let exactlyRate = Double(count) / seconds(start.duration(to: .now))
    try await Task.sleep(for: .milliseconds(300))  // the last batch's dispatch, after its COMMIT
    await exactly.stop()
    var rows = 0
    for try await value in try await sender.client.query(PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"))
        .decode(Int64.self)
    {
        rows = Int(value)
    }
    print(
        String(
            format:
                "exactly once, a backlog of %d events of 1 KiB (to the cursor's end): plain durable consumer %.0f events/s; consumer with a transactional handler (an INSERT each, batches of 500) %.0f events/s; ledger rows %d; on the buses %d and %d events, issues %d and %d",
            count, plainRate, exactlyRate, rows, received.events.count, dispatched.events.count,
            plain.issues.events.count, exactly.issues.events.count))
    try await sender.client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)"), logger: logger).consume()
    try await sender.bridge.cleanUpOutbox()
    await sender.stop()
}

/// Waits (300 s at most) until `consumer`'s cursor is at the channel's last row; returns whether.
private func waitForCursor(_ consumer: String, atEndOf channel: String, _ client: PostgresClient) async throws -> Bool {
    let deadline = ContinuousClock.now + .seconds(300)
    let query: PostgresQuery = """
        SELECT (SELECT id FROM eventbus_cursors WHERE channel = \(channel) AND consumer = \(consumer))
            = (SELECT max(id) FROM eventbus_outbox WHERE channel = \(channel))
        """
    while ContinuousClock.now < deadline {
        for try await done in try await client.query(query).decode(Bool?.self) where done == true { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return false
}

/// The latency of a plain durable reader (one event published every 20 ms on a channel of its
/// own) alone, then while a consumer on another channel runs transactional handlers of 5 ms each
/// in transactions capped at 1 s (the default): every reader of the database waits for those
/// transactions (it reads only rows with xid < pg_snapshot_xmin).
private func measureSnapshotHold(url: DatabaseURL) async throws {
    let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
    let readChannel = "bench_" + String(UUID().uuidString.prefix(8)).lowercased()
    let sender = try benchNode("sender", channel: readChannel, url: url)
    let reader = try benchNode("reader", channel: readChannel, url: url)
    try await sender.start()
    try await reader.start()
    func latencies(_ label: String, events: Int) async throws {
        let latencies = Latencies(on: reader.bus)
        for _ in 0..<events {
            try await sender.bridge.publish(Payload(sentAt: DispatchTime.now().uptimeNanoseconds, body: ""))
            try await Task.sleep(for: .milliseconds(20))
        }
        _ = await latencies.wait(forCount: events)
        let sorted = latencies.nanoseconds.sorted()
        print(
            String(
                format: "%@: %d events, latency p50 %.1f ms, p99 %.1f ms, max %.1f ms", label, events,
                percentile(sorted, 0.5), percentile(sorted, 0.99), percentile(sorted, 1)))
    }
    try await latencies("snapshot hold, a durable reader alone", events: 150)

    let slowChannel = "bench_" + String(UUID().uuidString.prefix(8)).lowercased()
    let table = "ledger_\(slowChannel)"
    let slowSender = try benchNode("sender", channel: slowChannel, url: url)
    try await slowSender.start()
    try await slowSender.client.query(
        PostgresQuery(unsafeSQL: "CREATE TABLE \(table) (sent_at bigint NOT NULL)"), logger: logger
    ).consume()
    let slow = try benchNode("slow", channel: slowChannel, url: url)
    let insert = "INSERT INTO \(table) (sent_at) VALUES ($1)"
    try slow.bridge.process(Payload.self) { payload, connection in
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(Int64(bitPattern: payload.sentAt))
        try await connection.query(PostgresQuery(unsafeSQL: insert, binds: bindings), logger: logger).consume()
        try await Task.sleep(for: .milliseconds(5))
    }
    try await slow.start()
    try await publishBacklog(slowSender, count: 2_000)  // about 12 s of 5 ms handlers
    try await Task.sleep(for: .milliseconds(500))
    try await latencies(
        "snapshot hold, the same reader while another consumer runs 5 ms handlers in transactions capped at 1 s",
        events: 150)
    await slow.stop()
    try await slowSender.client.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)"), logger: logger).consume()
    for node in [slowSender, reader, sender] { await node.stop() }
}
