// Events per second and latency from publish to the remote handler, over loopback, with 1 KiB
// payloads: two bridges (two buses, two origins) in one process, on one PostgreSQL server, at most
// once (NOTIFY) and durable (outbox + cursor), each on a channel of its own; then scheduled events
// (fired per second from a backlog all due at once, and lateness by the database's clock, fired_at -
// due_at, with the firer's poll interval). BENCH_EVENTS sets the events per run (default 5,000; a
// few hundred make a smoke run). The load average is printed first and last.
//
//   Integrations/EventBusPostgres/scripts/with-postgres.sh \
//       swift run -c release --package-path Integrations/EventBusPostgres EventBusPostgresBenchmark
//
// Latency is measured from just before `publish` to the moment the receiving instance's handler
// runs (on its bus queue), with one monotonic clock (both bridges are in this process).
import ClusterSupport
import Dispatch
import EventBus
import EventBusPostgres
import Foundation
import PostgresNIO

struct Payload: Event, Codable {
    let sentAt: UInt64
    let body: String
}

/// The latencies recorded by the receiver, in nanoseconds.
final class Latencies: Sendable {
    private let recorder: Recorder<Payload>
    private let arrivals: Recorder<Arrival>

    struct Arrival: Event { let nanoseconds: UInt64 }

    init(on bus: EventBus) {
        let arrivalBus = EventBus()
        arrivals = Recorder(Arrival.self, on: arrivalBus)
        recorder = Recorder(Payload.self, on: bus) { payload in
            arrivalBus.dispatch(Arrival(nanoseconds: DispatchTime.now().uptimeNanoseconds - payload.sentAt))
        }
    }

    var count: Int { arrivals.events.count }
    var nanoseconds: [UInt64] { arrivals.events.map(\.nanoseconds) }
    func wait(forCount count: Int) async -> Bool { await arrivals.wait(forCount: count, timeout: .seconds(120)) }
}

func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))
    return Double(sorted[index]) / 1_000_000
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Publishes `count` events from `concurrency` tasks and prints one line of figures.
func measure(_ label: String, sender: ClusterNode, receiver: ClusterNode, count: Int, concurrency: Int) async throws {
    let latencies = Latencies(on: receiver.bus)
    let body = String(repeating: "x", count: 1_024)
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<concurrency {
            group.addTask {
                for _ in stride(from: task, to: count, by: concurrency) {
                    try await sender.bridge.publish(Payload(sentAt: DispatchTime.now().uptimeNanoseconds, body: body))
                }
            }
        }
        try await group.waitForAll()
    }
    guard await latencies.wait(forCount: count) else {
        print("\(label): only \(latencies.count) of \(count) events arrived")
        exit(1)
    }
    let elapsed = seconds(start.duration(to: .now))
    let sorted = latencies.nanoseconds.sorted()
    let line = String(
        format: "%@: %d events of 1 KiB, %.0f events/s, latency p50 %.2f ms, p99 %.2f ms, max %.2f ms",
        label, count, Double(count) / elapsed, percentile(sorted, 0.5), percentile(sorted, 0.99),
        percentile(sorted, 1))
    print(line)
}

/// Measures one delivery mode on a channel of its own: a warm-up, then sequential and concurrent
/// publishing; returns how many issues the two nodes reported.
func measureMode(_ mode: String, url: DatabaseURL, count: Int, durable: Bool) async throws -> Int {
    let channel = "bench_" + String(UUID().uuidString.prefix(8)).lowercased()
    let nodes = try ["sender", "receiver"].map { name in
        var settings = PostgresEventBridge.Configuration()
        settings.publishBufferCapacity = 100_000
        if durable { settings.delivery = .durable(PostgresEventBridge.Durable(consumer: name)) }
        return try ClusterNode(name: "\(channel)_\(name)", url: url, channel: channel, configuration: settings)
    }
    let (sender, receiver) = (nodes[0], nodes[1])
    for node in nodes { node.bridge.register(Payload.self, as: "bench.payload.v1") }
    try await sender.start()
    try await receiver.start()
    try await measure("\(mode), warm-up", sender: sender, receiver: receiver, count: min(500, count), concurrency: 1)
    try await measure(
        "\(mode), sequential (1 publisher awaiting each)", sender: sender, receiver: receiver, count: count,
        concurrency: 1)
    try await measure(
        "\(mode), concurrent (16 publishing tasks, batched)", sender: sender, receiver: receiver, count: count,
        concurrency: 16)
    if durable { try await sender.bridge.cleanUpOutbox() }
    await sender.stop()
    await receiver.stop()
    return sender.issues.events.count + receiver.issues.events.count
}

/// The machine's load average (1, 5 and 15 minutes), as `/proc/loadavg` says it.
func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

/// Scheduled events on a channel of their own: a backlog of `count` events all due at once, fired
/// by one instance (fired per second, to the receiver's handler), then `count` events due over
/// 2 s with a firer polling every 250 ms (lateness, `fired_at - due_at` on the database's clock);
/// returns how many issues the nodes reported.
func measureScheduled(url: DatabaseURL, count: Int) async throws -> Int {
    let channel = "bench_" + String(UUID().uuidString.prefix(8)).lowercased()
    let poll = Duration.milliseconds(250)
    func node(_ name: String, fires: Bool, ahead: Duration = .zero) throws -> ClusterNode {
        var durable = PostgresEventBridge.Durable(consumer: name)
        durable.scheduling.firesEvents = fires
        durable.scheduling.pollInterval = poll
        durable.scheduling.clockOffset = ahead
        var settings = PostgresEventBridge.Configuration()
        settings.delivery = .durable(durable)
        let node = try ClusterNode(name: "\(channel)_\(name)", url: url, channel: channel, configuration: settings)
        node.bridge.register(Payload.self, as: "bench.payload.v1")
        return node
    }
    let body = String(repeating: "x", count: 1_024)
    func schedule(_ scheduler: ClusterNode, delay: @escaping @Sendable (Int) -> Duration) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    for index in stride(from: task, to: count, by: 16) {
                        try await scheduler.bridge.publish(Payload(sentAt: 0, body: body), after: delay(index))
                    }
                }
            }
            try await group.waitForAll()
        }
    }
    let scheduler = try node("scheduler", fires: false)
    let receiver = try node("receiver", fires: false)
    let latencies = Latencies(on: receiver.bus)
    try await scheduler.start()
    try await receiver.start()
    // Fired per second: a backlog due within the hour, and a firer whose clock is 2 h ahead.
    try await schedule(scheduler) { _ in .seconds(3600) }
    let firer = try node("firer", fires: true, ahead: .seconds(7200))
    let start = ContinuousClock.now
    try await firer.start()
    guard await latencies.wait(forCount: count) else {
        print("scheduled: only \(latencies.count) of \(count) events arrived")
        exit(1)
    }
    let elapsed = seconds(start.duration(to: .now))
    print(
        String(
            format:
                "scheduled, backlog of %d due at once, 1 firer (batches of 500): %.0f fired and received per second",
            count, Double(count) / elapsed))
    await firer.stop()
    // Lateness: due over 2 s, a firer on the real clock.
    let lateChannel = try node("late-firer", fires: true)
    try await lateChannel.start()
    let scheduledAt = ContinuousClock.now
    try await schedule(scheduler) { index in .milliseconds(500 + 2_000 * index / max(1, count)) }
    guard await latencies.wait(forCount: 2 * count) else {
        print("scheduled: only \(latencies.count - count) of \(count) timed events arrived")
        exit(1)
    }
    let spread = seconds(scheduledAt.duration(to: .now))
    let query: PostgresQuery = """
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY l), percentile_cont(0.99) WITHIN GROUP (ORDER BY l), max(l)
        FROM (SELECT (extract(epoch FROM fired_at - due_at) * 1000)::float8 AS l FROM eventbus_schedule
              WHERE channel = \(channel) AND due_at > created_at + interval '1 millisecond'
                AND due_at < created_at + interval '10 minutes') AS t
        """
    var figures: (Double, Double, Double) = (.nan, .nan, .nan)
    for try await row in try await scheduler.client.query(query).decode((Double, Double, Double).self) {
        figures = row
    }
    print(
        String(
            format:
                "scheduled, %d due over 2 s (%.1f s to schedule and receive), 1 firer polling every 250 ms: lateness (fired_at - due_at, database clock) p50 %.1f ms, p99 %.1f ms, max %.1f ms",
            count, spread, figures.0, figures.1, figures.2))
    // How long the firing transactions' outbox inserts took (one xid per firing transaction).
    let batches: PostgresQuery = """
        SELECT count(*)::float8, avg(n)::float8, percentile_cont(0.5) WITHIN GROUP (ORDER BY span), max(span)
        FROM (SELECT count(*) AS n, (extract(epoch FROM max(created_at) - min(created_at)) * 1000)::float8 AS span
              FROM eventbus_outbox WHERE channel = \(channel) GROUP BY xid) AS t
        """
    for try await (transactions, size, median, longest) in try await scheduler.client.query(batches).decode(
        (Double, Double, Double, Double).self)
    {
        print(
            String(
                format:
                    "scheduled, both parts: %.0f firing transactions, %.0f events each on average, their outbox inserts took p50 %.1f ms, max %.1f ms",
                transactions, size, median, longest))
    }
    try await scheduler.bridge.cleanUpOutbox()
    for node in [lateChannel, receiver, scheduler] { await node.stop() }
    return [scheduler, receiver, firer, lateChannel].reduce(0) { $0 + $1.issues.events.count }
}

func runBenchmark() async throws {
    print("load average (1, 5, 15 min): \(loadAverage())")
    guard let url = DatabaseURL.fromEnvironment else {
        print("Set EVENTBUS_POSTGRES_URL, or run through Integrations/EventBusPostgres/scripts/with-postgres.sh")
        exit(1)
    }
    let count = Int(ProcessInfo.processInfo.environment["BENCH_EVENTS"] ?? "") ?? 5_000
    var issues = try await measureMode("at most once", url: url, count: count, durable: false)
    issues += try await measureMode("durable", url: url, count: count, durable: true)
    issues += try await measureScheduled(url: url, count: count)
    let groupEvents =
        Int(ProcessInfo.processInfo.environment["BENCH_GROUP_EVENTS"] ?? "") ?? (count < 5_000 ? count : 20_000)
    issues += try await measureGroups(url: url, count: groupEvents, runs: count < 5_000 ? 1 : 5)
    print("load average (1, 5, 15 min): \(loadAverage())")
    print("issues reported: \(issues)")
}

try await runBenchmark()
