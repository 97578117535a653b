// Consumer groups: how fast a group drains a backlog, by its number of members.
//
// A backlog of BENCH_GROUP_EVENTS events (20,000 by default) over 64 keys becomes visible at once
// (published in one transaction, committed after the members have evened out their shares), and
// the group's members (bridges in this process, each with its own bus: its handlers run one at a
// time, as in one instance) drain it; each handler waits 200 µs without CPU (an I/O call), or, in
// the CPU-bound variant, spins for 200 µs. One member and two members are run alternately, five
// times each, and the medians compared (goal: two ≥ 1.6 × one); then four members, and the
// CPU-bound variant. The database's share is its backends' CPU time (from /proc) over the drain's.
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

/// The CPU time, in seconds, that PostgreSQL's processes (the postmaster's children) have used so
/// far, from /proc; `nil` when they cannot be read.
func databaseCPUSeconds() -> Double? {
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
    var total = 0.0
    for entry in entries where Int(entry) != nil {
        guard let command = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8),
            command.hasPrefix("postgres"),
            let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { continue }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3; utime and stime are fields 14 and 15.
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
        total += (user + system) / ticks
    }
    return total
}

/// This process's CPU time so far, in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
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
    let databaseBefore = databaseCPUSeconds()
    let processBefore = processCPUSeconds()
    guard await done.wait(forCount: count, timeout: .seconds(300)) else {
        print("group drain: only \(done.events.count) of \(count) events handled")
        exit(1)
    }
    let elapsed = seconds(start.duration(to: .now))
    let databaseShare = databaseBefore.flatMap { before in
        databaseCPUSeconds().map { after in
            let database = after - before
            return database / (database + processCPUSeconds() - processBefore)
        }
    }
    let issues = members.reduce(0) { $0 + $1.issues.events.count }
    for issue in members.flatMap(\.issues.events).prefix(3) { print("group drain: a member reported \(issue)") }
    for member in members { await member.stop() }
    for subscription in subscriptions { subscription.dispose() }
    return (Double(count) / elapsed, databaseShare, issues)
}

/// The consumer-group figures; returns how many issues the nodes reported.
func measureGroups(url: DatabaseURL, count: Int, runs: Int) async throws -> Int {
    let channel = "bench_" + String(UUID().uuidString.prefix(8)).lowercased()
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
    print(String(format: "group, 2 members / 1 member: %.2f× (goal ≥ 1.6×)", pair / single))
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
