// Durable (outbox + cursor), two scenarios: `durable`, one publisher and 16 tasks of it; and
// `durable-publishers`, 16 publishers that are 16 bridges (16 origins, 16 serial publishers, 16
// pools: 16 app instances), each awaiting each of its publishes, into one durable consumer, with the
// load average before and after and the server's fsync setting (goal: at least 5,000 events/s at
// load 1 or less).
import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import PostgresNIO

extension Scenario {
    /// Durable delivery's throughput and latency, from one publisher and from 16 tasks of it.
    static let durable = Scenario("durable", "outbox + cursor; one publisher, then 16 tasks of one bridge") { run in
        let (sender, receiver) = try await startPair(url: run.url, durable: true)
        try await measure(
            "durable, warm-up", sender: sender, receiver: receiver, count: min(500, run.events), concurrency: 1)
        try await measure(
            "durable, sequential (1 publisher awaiting each)", sender: sender, receiver: receiver, count: run.events,
            concurrency: 1)
        try await measure(
            "durable, concurrent (16 publishing tasks of one bridge, batched)", sender: sender, receiver: receiver,
            count: run.events, concurrency: 16)
        return await stopPair(sender, receiver)
    }

    /// 16 publishing bridges into one durable consumer (goal: at least 5,000 events/s at load ≤ 1).
    static let durablePublishers = Scenario(
        "durable-publishers", "16 bridges (16 app instances) publishing into one durable consumer"
    ) { run in
        try await measureSixteenPublishers(run)
    }
}

/// 16 publishing bridges, each with its own client (pool), origin and serial publisher and one
/// task awaiting each publish, not running (publish-only instances), into one running durable
/// consumer; records the goal.
private func measureSixteenPublishers(_ run: BenchmarkRun) async throws -> Int {
    let channel = benchmarkChannel()
    var settings = PostgresEventBridge.Configuration()
    settings.delivery = .durable(PostgresEventBridge.Durable(consumer: "receiver"))
    let receiver = try ClusterNode(name: "\(channel)_receiver", url: run.url, channel: channel, configuration: settings)
    receiver.bridge.register(Payload.self, as: "bench.payload.v1")
    try await receiver.start()
    let publishers = try (0..<16).map { index in
        var settings = PostgresEventBridge.Configuration()
        settings.delivery = .durable(PostgresEventBridge.Durable(consumer: "publisher\(index)"))
        let client = PostgresClient(configuration: run.url.clientConfiguration())
        let bus = EventBus()
        let bridge = try PostgresEventBridge(
            bus: bus, listenConfiguration: run.url.connectionConfiguration(applicationName: "p\(index)"),
            client: client, channel: channel, configuration: settings)
        bridge.register(Payload.self, as: "bench.payload.v1")
        let issues = Recorder(BridgeIssue.self, on: bus)
        return (bridge: bridge, issues: issues, running: Task { await client.run() })
    }
    let bridges = publishers.map(\.bridge)
    let fsync = await serverSetting("fsync", client: receiver.client)
    // Each pool opens its first connection, and the schema check runs once per bridge.
    _ = try await publishAndReceive(
        "durable, 16 bridges, warm-up", senders: bridges, tasksEach: 1, receiver: receiver, count: min(320, run.events))
    let before = oneMinuteLoad()
    let cpuBefore = await CPUTime.now(server: receiver.client)
    let figures = try await publishAndReceive(
        "durable, 16 publishers", senders: bridges, tasksEach: 1, receiver: receiver, count: run.events)
    let cpuAfter = await CPUTime.now(server: receiver.client)
    let after = oneMinuteLoad()
    print(
        figures.line(
            "durable, 16 publishers (16 bridges, one task each awaiting each publish) into 1 consumer, fsync=\(fsync)"))
    print(String(format: "durable, 16 publishers: 1-minute load average %.2f before, %.2f after", before, after))
    // What an event costs in CPU, and so what 2 idle cores would carry: the ceiling without
    // other work on the machine.
    let perEvent = (
        process: (cpuAfter.process - cpuBefore.process) / Double(run.events) * 1e6,
        server: (cpuAfter.server - cpuBefore.server) / Double(run.events) * 1e6
    )
    print(
        String(
            format:
                "durable, 16 publishers: CPU per event %.0f µs in this process (17 bridges), %.0f µs in the server's processes; %d cores at that cost: %.0f events/s",
            perEvent.process, perEvent.server, ProcessInfo.processInfo.activeProcessorCount,
            Double(ProcessInfo.processInfo.activeProcessorCount) * 1e6 / (perEvent.process + perEvent.server)))
    run.goals.record(
        "durable, at least 5,000 events/s from 16 publishers at load 1 or less (fsync=\(fsync))",
        measured: String(
            format: "%.0f events/s, 1-minute load %.2f before, %.2f after%@", figures.eventsPerSecond, before, after,
            max(before, after) > 1 ? " (load above 1: the goal's condition does not hold)" : ""),
        met: figures.eventsPerSecond >= 5_000)
    _ = try? await receiver.bridge.cleanUpOutbox()
    await receiver.stop()
    for publisher in publishers {
        publisher.running.cancel()
        await publisher.running.value
    }
    var issues = printIssues("durable, 16 publishers, receiver", receiver.issues.events)
    for (index, publisher) in publishers.enumerated() {
        issues += printIssues("durable, 16 publishers, publisher \(index)", publisher.issues.events)
    }
    return issues
}
