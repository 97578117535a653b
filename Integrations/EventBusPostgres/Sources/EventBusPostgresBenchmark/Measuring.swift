// What the scenarios share: the benchmark's event, the receiver's latency recorder, percentiles,
// the publishing loop that prints one line of figures, and the machine's load average.
import ClusterSupport
import Dispatch
import EventBus
import EventBusPostgres
import Foundation
import PostgresNIO

/// The benchmark's event: when it was published (`DispatchTime` nanoseconds) and a body.
struct Payload: Event, Codable {
    let sentAt: UInt64
    let body: String
}

/// The 1 KiB body every measured event carries.
let kibibyteBody = String(repeating: "x", count: 1_024)

/// The latencies recorded by the receiver, in nanoseconds: from `sentAt` to its handler (on the
/// receiving bus's queue).
final class Latencies: Sendable {
    private let recorder: Recorder<Payload>
    private let arrivals: Recorder<Arrival>

    /// One event's latency, recorded on a bus of its own (so that the receiving handler only
    /// reads the clock and dispatches).
    struct Arrival: Event { let nanoseconds: UInt64 }

    /// Records the latency of every `Payload` that `bus` delivers from now on.
    init(on bus: EventBus) {
        let arrivalBus = EventBus()
        arrivals = Recorder(Arrival.self, on: arrivalBus)
        recorder = Recorder(Payload.self, on: bus) { payload in
            arrivalBus.dispatch(Arrival(nanoseconds: DispatchTime.now().uptimeNanoseconds - payload.sentAt))
        }
    }

    /// How many events have arrived.
    var count: Int { arrivals.events.count }
    /// Their latencies, in arrival order.
    var nanoseconds: [UInt64] { arrivals.events.map(\.nanoseconds) }
    /// Waits (2 minutes at most) until `count` events have arrived; returns whether they have.
    func wait(forCount count: Int) async -> Bool { await arrivals.wait(forCount: count, timeout: .seconds(120)) }
}

/// A latency distribution, in milliseconds.
struct Distribution: Sendable {
    /// The samples, sorted, in nanoseconds.
    let sorted: [UInt64]

    /// The distribution of `nanoseconds`.
    init(_ nanoseconds: [UInt64]) { sorted = nanoseconds.sorted() }

    /// The `p` quantile (0...1), nearest rank, in milliseconds; NaN without samples.
    func quantile(_ p: Double) -> Double { percentile(sorted, p) }
    /// The median, in milliseconds.
    var p50: Double { quantile(0.5) }
    /// The 99th percentile, in milliseconds.
    var p99: Double { quantile(0.99) }
    /// The largest sample, in milliseconds.
    var max: Double { quantile(1) }
    /// "p50 0.31 ms, p99 0.62 ms, max 1.20 ms".
    var summary: String { String(format: "p50 %.2f ms, p99 %.2f ms, max %.2f ms", p50, p99, max) }
}

/// The `p` quantile (0...1) of `sorted` nanoseconds, nearest rank, in milliseconds.
func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let index = min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))
    return Double(sorted[index]) / 1_000_000
}

/// `duration` in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// A channel name of its own for one measurement.
func benchmarkChannel() -> String {
    "bench_" + String(UUID().uuidString.prefix(8)).lowercased()
}

/// What one publishing run measured.
struct Throughput: Sendable {
    /// How many events arrived.
    let count: Int
    /// Seconds from the first publish to the last arrival.
    let elapsed: Double
    /// Publish-to-handler latencies, in nanoseconds.
    let nanoseconds: [UInt64]
    /// How long each `publish` took to return (the serial publisher and the send), in nanoseconds.
    let publishNanoseconds: [UInt64]

    /// Events per second, from the first publish to the last arrival.
    var eventsPerSecond: Double { Double(count) / elapsed }
    /// The latency distribution.
    var latency: Distribution { Distribution(nanoseconds) }

    /// Several runs as one: their events, times and latencies added up.
    static func merged(_ runs: [Throughput]) -> Throughput {
        Throughput(
            count: runs.reduce(0) { $0 + $1.count }, elapsed: runs.reduce(0) { $0 + $1.elapsed },
            nanoseconds: runs.flatMap(\.nanoseconds), publishNanoseconds: runs.flatMap(\.publishNanoseconds))
    }

    /// "label: N events of 1 KiB, X events/s, latency p50 …".
    func line(_ label: String) -> String {
        String(
            format: "%@: %d events of 1 KiB, %.0f events/s, latency %@", label, count, eventsPerSecond,
            latency.summary)
    }
}

/// Publishes `count` events from `concurrency` tasks of `sender` and prints one line of figures.
@discardableResult
func measure(_ label: String, sender: ClusterNode, receiver: ClusterNode, count: Int, concurrency: Int) async throws
    -> Throughput
{
    let figures = try await publishAndReceive(
        label, senders: [sender.bridge], tasksEach: concurrency, receiver: receiver, count: count)
    print(figures.line(label))
    return figures
}

/// Publishes `count` events through `senders`, from `tasksEach` tasks per sender (each awaiting
/// each of its publishes), to `receiver`, and returns the figures (exits, saying so under `label`,
/// if they do not all arrive within 2 minutes).
func publishAndReceive(
    _ label: String, senders: [PostgresEventBridge], tasksEach: Int, receiver: ClusterNode, count: Int
) async throws -> Throughput {
    let latencies = Latencies(on: receiver.bus)
    let publishers = senders.flatMap { sender in Array(repeating: sender, count: tasksEach) }
    let start = ContinuousClock.now
    let publishing = try await withThrowingTaskGroup(of: [UInt64].self) { group in
        for (task, sender) in publishers.enumerated() {
            group.addTask {
                var durations: [UInt64] = []
                for _ in stride(from: task, to: count, by: publishers.count) {
                    let sentAt = DispatchTime.now().uptimeNanoseconds
                    try await sender.publish(Payload(sentAt: sentAt, body: kibibyteBody))
                    durations.append(DispatchTime.now().uptimeNanoseconds - sentAt)
                }
                return durations
            }
        }
        return try await group.reduce(into: []) { $0 += $1 }
    }
    guard await latencies.wait(forCount: count) else {
        print("\(label): only \(latencies.count) of \(count) events arrived")
        exit(1)
    }
    return Throughput(
        count: count, elapsed: seconds(start.duration(to: .now)), nanoseconds: latencies.nanoseconds,
        publishNanoseconds: publishing)
}

/// The machine's load average (1, 5 and 15 minutes), as `/proc/loadavg` says it.
func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

/// The 1-minute load average; NaN where `/proc/loadavg` is missing.
func oneMinuteLoad() -> Double {
    loadAverage().split(separator: " ").first.flatMap { Double($0) } ?? .nan
}

/// The server's setting `name` (`SHOW`), or "unknown".
func serverSetting(_ name: String, client: PostgresClient) async -> String {
    guard let rows = try? await client.query(PostgresQuery(unsafeSQL: "SELECT current_setting('\(name)')")) else {
        return "unknown"
    }
    var value = "unknown"
    do {
        for try await setting in rows.decode(String.self) { value = setting }
    } catch {
        return "unknown"
    }
    return value
}

/// Prints the first five of `issues` (and how many there were), under `label`; nothing if none.
/// Returns their count.
@discardableResult
func printIssues(_ label: String, _ issues: [BridgeIssue]) -> Int {
    guard !issues.isEmpty else { return 0 }
    print("\(label): \(issues.count) issues reported, the first: \(issues.prefix(5).map { "\($0)" })")
    return issues.count
}

/// CPU time used by this process and by the server's processes, to say where a throughput goes.
struct CPUTime: Sendable {
    /// Seconds (user + system) of this process.
    let process: Double
    /// Seconds (user + system) of the server's processes listed in `pg_stat_activity` (backends,
    /// WAL writer, checkpointer…), from `/proc`; NaN if the server is not on this machine.
    let server: Double

    /// Now, with the server's processes as `client` lists them.
    static func now(server client: PostgresClient) async -> CPUTime {
        var clock = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &clock)
        let process = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9
        var pids: [Int32] = []
        if let rows = try? await client.query("SELECT pid FROM pg_stat_activity") {
            do {
                for try await pid in rows.decode(Int32.self) { pids.append(pid) }
            } catch {
                pids = []
            }
        }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var server = pids.isEmpty ? Double.nan : 0
        for pid in pids {
            // Fields after the command's closing parenthesis: state, then utime and stime 11 and 12 later.
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let end = stat.lastIndex(of: ")")
            else { return CPUTime(process: process, server: .nan) }
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
                return CPUTime(process: process, server: .nan)
            }
            server += (user + system) / ticks
        }
        return CPUTime(process: process, server: server)
    }
}
