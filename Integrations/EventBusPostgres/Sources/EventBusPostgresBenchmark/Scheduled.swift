// Scheduled events: fired per second from a backlog all due at once (a firer whose clock is 2 h
// ahead, `Scheduling.clockOffset`), then lateness of events due over 2 s with a firer polling
// every 250 ms: due → received by the receiving handler (wall clock, the server's too: one
// machine), and fired_at - due_at (the database's clock).
import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import PostgresNIO

/// A scheduled event of the benchmark: when it is due (seconds since 1970) and a body.
struct Timed: Event, Codable {
    let dueAt: Double
    let body: String
}

/// The lateness of every `Timed` event a bus delivers: its handler's wall clock minus its due time.
final class Lateness: Sendable {
    private let recorder: Recorder<Timed>
    private let arrivals: Recorder<Arrival>

    /// One event's lateness, in nanoseconds (0 if early, which would be a defect).
    struct Arrival: Event {
        let nanoseconds: UInt64
        let early: Bool
    }

    /// Records the lateness of every `Timed` that `bus` delivers from now on.
    init(on bus: EventBus) {
        let arrivalBus = EventBus()
        arrivals = Recorder(Arrival.self, on: arrivalBus)
        recorder = Recorder(Timed.self, on: bus) { event in
            let late = Date().timeIntervalSince1970 - event.dueAt
            arrivalBus.dispatch(Arrival(nanoseconds: UInt64(max(0, late) * 1e9), early: late < 0))
        }
    }

    /// How many events have arrived.
    var count: Int { arrivals.events.count }
    /// Their lateness, in arrival order.
    var nanoseconds: [UInt64] { arrivals.events.map(\.nanoseconds) }
    /// How many arrived before they were due.
    var early: Int { arrivals.events.filter(\.early).count }
    /// Waits (2 minutes at most) until `count` events have arrived; returns whether they have.
    func wait(forCount count: Int) async -> Bool { await arrivals.wait(forCount: count, timeout: .seconds(120)) }
}

extension Scenario {
    /// Scheduled events: fired per second, and lateness with a 250 ms poll.
    static let scheduled = Scenario(
        "scheduled", "a backlog due at once (fired per second), then events due over 2 s (lateness)"
    ) { run in
        try await measureScheduled(run)
    }
}

/// The scheduled scenario: a scheduler, a receiver and firers, each a durable node of its own on
/// one channel; returns how many issues they reported.
private func measureScheduled(_ run: BenchmarkRun) async throws -> Int {
    let count = run.events
    let channel = benchmarkChannel()
    let poll = Duration.milliseconds(250)
    func node(_ name: String, fires: Bool, ahead: Duration = .zero) throws -> ClusterNode {
        var durable = PostgresEventBridge.Durable(consumer: name)
        durable.scheduling.firesEvents = fires
        durable.scheduling.pollInterval = poll
        durable.scheduling.clockOffset = ahead
        var settings = PostgresEventBridge.Configuration()
        settings.delivery = .durable(durable)
        let node = try ClusterNode(name: "\(channel)_\(name)", url: run.url, channel: channel, configuration: settings)
        node.bridge.register(Timed.self, as: "bench.timed.v1")
        return node
    }
    /// Schedules `count` events from 16 tasks, event `index` due at `due(index)`.
    func schedule(_ scheduler: ClusterNode, due: @escaping @Sendable (Int) -> Date) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    for index in stride(from: task, to: count, by: 16) {
                        let date = due(index)
                        try await scheduler.bridge.publish(
                            Timed(dueAt: date.timeIntervalSince1970, body: kibibyteBody), at: date)
                    }
                }
            }
            try await group.waitForAll()
        }
    }
    let scheduler = try node("scheduler", fires: false)
    let receiver = try node("receiver", fires: false)
    try await scheduler.start()
    try await receiver.start()

    // Fired per second: a backlog due within the hour, and a firer whose clock is 2 h ahead.
    let backlog = Lateness(on: receiver.bus)
    let inAnHour = Date().addingTimeInterval(3_600)
    try await schedule(scheduler) { _ in inAnHour }
    let firer = try node("firer", fires: true, ahead: .seconds(7_200))
    let start = ContinuousClock.now
    try await firer.start()
    guard await backlog.wait(forCount: count) else {
        print("scheduled: only \(backlog.count) of \(count) events arrived")
        exit(1)
    }
    let elapsed = seconds(start.duration(to: .now))
    print(
        String(
            format:
                "scheduled, backlog of %d due at once, 1 firer (batches of 500): %.0f fired and received per second",
            count, Double(count) / elapsed))
    await firer.stop()

    // Lateness: due over 2 s, from a lead long enough for every INSERT to come before its due
    // time, and a firer on the real clock.
    let late = Lateness(on: receiver.bus)
    let realFirer = try node("late-firer", fires: true)
    try await realFirer.start()
    let lead = 1 + Double(count) * 0.000_5
    let first = Date().addingTimeInterval(lead)
    try await schedule(scheduler) { index in first.addingTimeInterval(2 * Double(index) / Double(max(1, count))) }
    guard await late.wait(forCount: count) else {
        print("scheduled: only \(late.count) of \(count) timed events arrived")
        exit(1)
    }
    let received = Distribution(late.nanoseconds)
    let database = try await firingLateness(scheduler.client, channel: channel, after: first)
    print(
        String(
            format:
                "scheduled, %d due over 2 s, 1 firer polling every %d ms: lateness due → received %@; fired_at - due_at (database clock) p50 %.1f ms, p99 %.1f ms, max %.1f ms; %d received early, %d scheduled after their due time",
            count, Int(poll / .milliseconds(1)), received.summary, database.p50, database.p99, database.max,
            late.early, database.scheduledLate))
    run.goals.record(
        "scheduled, none received before it is due",
        measured: String(
            format: "%d of %d early (due → received p99 %.1f ms, poll %d ms)", late.early, count,
            received.p99, Int(poll / .milliseconds(1))),
        met: late.early == 0)
    try await printFiringTransactions(scheduler.client, channel: channel)
    _ = try? await scheduler.bridge.cleanUpOutbox()
    for node in [realFirer, receiver, scheduler] { await node.stop() }
    return [scheduler, receiver, firer, realFirer].reduce(0) { $0 + $1.issues.events.count }
}

/// The lateness by the database's clock (`fired_at - due_at`, milliseconds) of the channel's
/// events due in the 2 s from `date`, and how many were inserted after their due time.
private func firingLateness(_ client: PostgresClient, channel: String, after date: Date) async throws -> (
    p50: Double, p99: Double, max: Double, scheduledLate: Int
) {
    let query: PostgresQuery = """
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY l), percentile_cont(0.99) WITHIN GROUP (ORDER BY l),
               max(l), count(*) FILTER (WHERE created_at > due_at)
        FROM (SELECT (extract(epoch FROM fired_at - due_at) * 1000)::float8 AS l, created_at, due_at
              FROM eventbus_schedule WHERE channel = \(channel) AND due_at >= \(date)
                  AND due_at <= \(date.addingTimeInterval(2))) AS t
        """
    var figures: (Double, Double, Double, Int) = (.nan, .nan, .nan, 0)
    for try await (p50, p99, max, late) in try await client.query(query).decode((Double, Double, Double, Int64).self) {
        figures = (p50, p99, max, Int(late))
    }
    return figures
}

/// Prints how many firing transactions both parts took and how long their outbox inserts took
/// (one xid per firing transaction).
private func printFiringTransactions(_ client: PostgresClient, channel: String) async throws {
    let batches: PostgresQuery = """
        SELECT count(*)::float8, avg(n)::float8, percentile_cont(0.5) WITHIN GROUP (ORDER BY span), max(span)
        FROM (SELECT count(*) AS n, (extract(epoch FROM max(created_at) - min(created_at)) * 1000)::float8 AS span
              FROM eventbus_outbox WHERE channel = \(channel) GROUP BY xid) AS t
        """
    for try await (transactions, size, median, longest) in try await client.query(batches).decode(
        (Double, Double, Double, Double).self)
    {
        print(
            String(
                format:
                    "scheduled, both parts: %.0f firing transactions, %.0f events each on average, their outbox inserts took p50 %.1f ms, max %.1f ms",
                transactions, size, median, longest))
    }
}
