// `groups`: how fast a consumer group drains a backlog, by its number of members.
//
// A backlog of BENCH_GROUP_EVENTS events (20,000 by default) over 64 keys becomes visible at once
// (published in one transaction, committed after the members have evened out their shares), and
// the group's members (bridges in this process, each with its own bus: its handlers run one at a
// time, as in one instance) drain it; each handler waits 200 µs without CPU (an I/O call), or, in
// the CPU-bound variant, spins for 200 µs. One member and two members are run alternately, five
// times each, and the medians compared (goal: two ≥ 1.6 × one); then four members, and the
// CPU-bound variant. The database's share is its processes' CPU time (`CPUTime`, from /proc) over
// that and this process's. BENCH_GROUP_EVENTS sets the backlog (a smoke run uses BENCH_EVENTS).
import ClusterSupport
import Dispatch
import EventBus
import EventBusPostgres
import Foundation
import PostgresNIO

/// A unit of work with a key: the group partitions by it.
struct Work: Event, Codable {
    let key: String
    let n: Int
    var eventType: String { key }
}

/// How a handler spends its 200 µs.
enum HandlerKind: String {
    case waiting = "waiting 200 µs (no CPU)"
    case spinning = "spinning 200 µs (CPU-bound)"

    func run() {
        switch self {
        case .waiting:
            Thread.sleep(forTimeInterval: 0.000_2)
        case .spinning:
            let end = DispatchTime.now().uptimeNanoseconds + 200_000
            while DispatchTime.now().uptimeNanoseconds < end {}
        }
    }
}

/// One drain: `members` members of a new group on `channel` drain `count` events committed at
/// once by `publisher`; returns events per second and the database's share of the CPU time.
func drain(
    members memberCount: Int, count: Int, kind: HandlerKind, publisher: PostgresEventBridge, client: PostgresClient,
    channel: String, url: DatabaseURL
) async throws -> (rate: Double, databaseShare: Double?, issues: Int) {
    let group = "g" + String(UUID().uuidString.prefix(6)).lowercased()
    let counter = EventBus()
    let done = Recorder(Work.self, on: counter)
    var members: [ClusterNode] = []
    var subscriptions: [EventToken] = []
    for index in 0..<memberCount {
        var settings = PostgresEventBridge.Configuration()
        settings.delivery = .durable(.init(group: group, partitions: 16))
        let member = try ClusterNode(
            name: "\(channel)_\(group)_\(index)", url: url, channel: channel, configuration: settings)
        member.bridge.register(Work.self, as: "bench.work.v1")
        subscriptions.append(
            member.bus.on(Work.self).next { work in
                kind.run()
                counter.dispatch(work)
            })
        try await member.start()
        members.append(member)
    }
    // Shares evened out: two heartbeats (a third of the 3 s lease each).
    try await Task.sleep(for: .milliseconds(memberCount > 1 ? 2_500 : 200))
    try await client.withTransaction(logger: Logger(label: "bench")) { connection in
        for n in 0..<count {
            try await publisher.publish(Work(key: "k\(n % 64)", n: n), in: connection)
        }
    }
    let start = ContinuousClock.now
    let before = await CPUTime.now(server: client)
    guard await done.wait(forCount: count, timeout: .seconds(300)) else {
        print("group drain: only \(done.events.count) of \(count) events handled")
        exit(1)
    }
    let elapsed = seconds(start.duration(to: .now))
    let after = await CPUTime.now(server: client)
    let server = after.server - before.server
    let databaseShare: Double? = server.isNaN ? nil : server / (server + after.process - before.process)
    let issues = members.reduce(0) { $0 + $1.issues.events.count }
    for issue in members.flatMap(\.issues.events).prefix(3) { print("group drain: a member reported \(issue)") }
    for member in members { await member.stop() }
    for subscription in subscriptions { subscription.dispose() }
    return (Double(count) / elapsed, databaseShare, issues)
}

extension Scenario {
    /// Consumer groups draining a backlog (goal: two members at least 1.6 × one).
    static let consumerGroups = Scenario(
        "groups", "consumer groups: a backlog over 64 keys drained by 1, 2 and 4 members"
    ) { run in
        let events = Int(ProcessInfo.processInfo.environment["BENCH_GROUP_EVENTS"] ?? "") ?? 20_000
        return try await measureGroups(
            url: run.url, count: run.isSmoke ? run.events : events, runs: run.isSmoke ? 1 : 5, goals: run.goals)
    }
}

/// The consumer-group figures; records the goal; returns how many issues the nodes reported.
private func measureGroups(url: DatabaseURL, count: Int, runs: Int, goals: Goals) async throws -> Int {
    let channel = benchmarkChannel()
    // The publisher only publishes (a bridge publishes without running): it does not read the
    // backlog back, so its own echoes do not cost the drain anything.
    var settings = PostgresEventBridge.Configuration()
    settings.delivery = .durable(.init(consumer: "publisher"))
    let client = PostgresClient(configuration: url.clientConfiguration())
    let running = Task { await client.run() }
    let publisher = try PostgresEventBridge(
        bus: EventBus(), listenConfiguration: url.connectionConfiguration(applicationName: "\(channel)_publisher"),
        client: client, channel: channel, configuration: settings)
    publisher.register(Work.self, as: "bench.work.v1")
    var issues = 0
    func line(_ label: String, _ rates: [Double], _ shares: [Double?]) -> Double {
        let median = rates.sorted()[rates.count / 2]
        let share = shares.compactMap { $0 }.sorted().dropFirst(shares.count / 2).first
        print(
            String(
                format: "group, %@: median %.0f events/s of %d runs (%@), database's CPU share %@", label, median,
                rates.count, rates.map { String(format: "%.0f", $0) }.joined(separator: ", "),
                share.map { String(format: "%.0f %%", $0 * 100) } ?? "unknown"))
        return median
    }
    var one: ([Double], [Double?]) = ([], [])
    var two: ([Double], [Double?]) = ([], [])
    for _ in 0..<runs {
        for members in [1, 2] {
            let result = try await drain(
                members: members, count: count, kind: .waiting, publisher: publisher, client: client, channel: channel,
                url: url)
            issues += result.issues
            if members == 1 {
                one.0.append(result.rate)
                one.1.append(result.databaseShare)
            } else {
                two.0.append(result.rate)
                two.1.append(result.databaseShare)
            }
        }
        try await publisher.cleanUpOutbox()
    }
    let label = "\(count) events over 64 keys, 16 partitions, handlers \(HandlerKind.waiting.rawValue)"
    let single = line("1 member, \(label)", one.0, one.1)
    let pair = line("2 members, \(label)", two.0, two.1)
    goals.record(
        "a consumer group of 2 drains ≥ 1.6 × as fast as 1 member (median of \(runs))",
        measured: String(format: "%.2f×", pair / single), met: pair / single >= 1.6)
    for (members, kind) in [(4, HandlerKind.waiting), (1, .spinning), (2, .spinning)] {
        let result = try await drain(
            members: members, count: count, kind: kind, publisher: publisher, client: client, channel: channel, url: url
        )
        issues += result.issues
        _ = line(
            "\(members) member\(members == 1 ? "" : "s"), \(count) events, handlers \(kind.rawValue)", [result.rate],
            [result.databaseShare])
        try await publisher.cleanUpOutbox()
    }
    running.cancel()
    await running.value
    return issues
}
