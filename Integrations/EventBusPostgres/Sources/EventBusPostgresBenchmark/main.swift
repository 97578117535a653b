// Events per second and latency from publish to the remote handler, over loopback, with 1 KiB
// payloads: two bridges (two buses, two origins) in one process, on one PostgreSQL server, at most
// once (NOTIFY) and durable (outbox + cursor), each on a channel of its own. BENCH_EVENTS sets the
// events per run (default 5,000; a few hundred make a smoke run).
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

func runBenchmark() async throws {
    guard let url = DatabaseURL.fromEnvironment else {
        print("Set EVENTBUS_POSTGRES_URL, or run through Integrations/EventBusPostgres/scripts/with-postgres.sh")
        exit(1)
    }
    let count = Int(ProcessInfo.processInfo.environment["BENCH_EVENTS"] ?? "") ?? 5_000
    var issues = try await measureMode("at most once", url: url, count: count, durable: false)
    issues += try await measureMode("durable", url: url, count: count, durable: true)
    print("issues reported: \(issues)")
}

try await runBenchmark()
