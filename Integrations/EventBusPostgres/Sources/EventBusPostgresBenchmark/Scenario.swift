// The benchmark's shape: a scenario is a named unit (a file of its own, a `static let` on
// `Scenario`), `main.swift` lists them, and `BENCH_SCENARIOS` selects which run.
import ClusterSupport
import EventBusPostgres
import Foundation
import NIOConcurrencyHelpers
import PostgresNIO

/// One part of the benchmark: a name to select it by and what it measures.
///
/// A scenario prints its own lines of figures, records its goals in ``BenchmarkRun/goals``, stops
/// what it started, and returns how many issues its bridges reported (the run ends with
/// `issues reported: N`, which CI's smoke run requires to be 0). Add one as a file of its own:
///
/// ```swift
/// extension Scenario {
///     static let consumerGroups = Scenario("groups", "consumer groups: partitions, takeovers") { run in
///         let node = try ClusterNode(name: "g", url: run.url, channel: benchmarkChannel())
///         try await node.start()
///         // … measure with run.events (small when run.isSmoke), print a line, run.goals.record(…)
///         await node.stop()
///         return node.issues.events.count
///     }
/// }
/// ```
///
/// and one line in `main.swift`'s list. A scenario that only runs when named
/// (`BENCH_SCENARIOS=chaos`) passes `runsByDefault: false`.
struct Scenario: Sendable {
    /// The name `BENCH_SCENARIOS` selects it by: lowercase, no spaces or commas.
    let name: String
    /// One line saying what it measures, printed before it runs.
    let summary: String
    /// Whether a run that does not set `BENCH_SCENARIOS` includes it.
    let runsByDefault: Bool
    /// Measures and prints; returns how many issues the bridges reported.
    let run: @Sendable (BenchmarkRun) async throws -> Int

    /// A scenario named `name`.
    init(
        _ name: String, _ summary: String, runsByDefault: Bool = true,
        run: @escaping @Sendable (BenchmarkRun) async throws -> Int
    ) {
        self.name = name
        self.summary = summary
        self.runsByDefault = runsByDefault
        self.run = run
    }
}

/// What every scenario of one run gets: the server, the size of the run, the goals' record.
struct BenchmarkRun: Sendable {
    /// The server (`EVENTBUS_POSTGRES_URL`).
    let url: DatabaseURL
    /// Events per measured row (`BENCH_EVENTS`, default 5,000).
    let events: Int
    /// Fewer than 1,000 events per row: CI's smoke run (`BENCH_EVENTS=200`, a debug build), which
    /// must stay fast; its figures are not measurements.
    var isSmoke: Bool { events < 1_000 }
    /// Where scenarios record their goals, printed together at the end.
    let goals: Goals
}

/// The goals the scenarios checked, printed together at the end of the run.
final class Goals: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])

    /// Records that `goal` was checked: `measured` is what the run saw, `met` whether it holds.
    func record(_ goal: String, measured: String, met: Bool) {
        lines.withLockedValue { $0.append("goal, \(goal): \(measured): \(met ? "met" : "NOT met")") }
    }

    /// Every goal recorded, in order.
    var all: [String] { lines.withLockedValue { $0 } }
}

/// Runs the scenarios `BENCH_SCENARIOS` names (comma-separated; by default every one that runs by
/// default), in the order given, between two prints of the load average; ends with the goals and
/// the line `issues reported: N`.
func runBenchmark(_ scenarios: [Scenario]) async throws {
    let environment = ProcessInfo.processInfo.environment
    print("load average (1, 5, 15 min): \(loadAverage())")
    guard let url = DatabaseURL.fromEnvironment else {
        print("Set EVENTBUS_POSTGRES_URL, or run through Integrations/EventBusPostgres/scripts/with-postgres.sh")
        exit(1)
    }
    let run = BenchmarkRun(
        url: url, events: Int(environment["BENCH_EVENTS"] ?? "") ?? 5_000, goals: Goals())
    let named = environment["BENCH_SCENARIOS"].map { $0.split(separator: ",").map(String.init) }
    if let unknown = named?.first(where: { name in !scenarios.contains { $0.name == name } }) {
        print("BENCH_SCENARIOS: no scenario \(unknown); there are \(scenarios.map(\.name).joined(separator: ", "))")
        exit(1)
    }
    let selected = scenarios.filter { named?.contains($0.name) ?? $0.runsByDefault }
    await printSetting(url: url, events: run.events)
    var issues = 0
    for scenario in selected {
        print("--- \(scenario.name): \(scenario.summary)")
        issues += try await scenario.run(run)
    }
    for goal in run.goals.all { print(run.isSmoke ? "\(goal) (smoke run: not a measurement)" : goal) }
    print("load average (1, 5, 15 min): \(loadAverage())")
    print("issues reported: \(issues)")
}

/// Prints the machine (cores), the build, and the server's version and durability settings.
private func printSetting(url: DatabaseURL, events: Int) async {
    let client = PostgresClient(configuration: url.clientConfiguration())
    let running = Task { await client.run() }
    let version = await serverSetting("server_version", client: client)
    let fsync = await serverSetting("fsync", client: client)
    let commit = await serverSetting("synchronous_commit", client: client)
    running.cancel()
    await running.value
    #if DEBUG
        let build = "debug"
    #else
        let build = "release"
    #endif
    print(
        "machine: \(ProcessInfo.processInfo.activeProcessorCount) cores; \(build) build; \(events) events per row; "
            + "PostgreSQL \(version) on \(url.host):\(url.port), fsync=\(fsync), synchronous_commit=\(commit)")
}
