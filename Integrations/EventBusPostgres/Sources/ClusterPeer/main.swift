// The second process of the cross-process test (CrossProcessTests): joins a channel, says "ready",
// publishes PEER_SEND pings, waits for PEER_EXPECT pings from the test process, checks that they
// came once each and in order, says so, and exits 0 (1 on any failure).
//
//   EVENTBUS_POSTGRES_URL=... PEER_CHANNEL=t_abc PEER_NAME=peer PEER_SEND=200 PEER_EXPECT=100 ClusterPeer
//
// With PEER_CONSUMER set (DurableTests): a durable receiver with that consumer name (batches of
// PEER_BATCH rows) that says "ready", then "got <from> <n>" from the handler of each ping (which
// then sleeps PEER_DELAY_MS milliseconds, 0 by default: a batch in flight long enough to be killed
// in), "redelivered <count>" and "expired <count>" for each such issue, until it is killed. Like
// every running durable bridge it fires the channel's scheduled events (ScheduleTests), every
// PEER_FIRE_POLL_MS milliseconds (1,000 by default), PEER_FIRE_BATCH at a time (500), with the
// database's clock moved PEER_FIRE_AHEAD_S seconds ahead (0). With PEER_GROUP set (ConsumerGroupTests),
// it is a member of that consumer group (PEER_PARTITIONS partitions, 16 by default).
import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation

struct Ping: Event, Codable, Equatable {
    let from: String
    let n: Int
}

/// A keyed event (its room): a consumer group partitions by it.
struct RoomMessage: Event, Codable, Equatable {
    let room: String
    let text: String
    var eventType: String { room }
}

/// Writes a line to standard output at once (unbuffered: the test reads it while we run).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    say("peer: FAILED: \(message)")
    exit(1)
}

/// A durable receiver that says what its handlers ran, until killed.
func runDurableReceiver(url: DatabaseURL, channel: String, consumer: String) async throws -> Never {
    var durable = PostgresEventBridge.Durable(consumer: consumer)
    let environment = ProcessInfo.processInfo.environment
    durable.batchSize = Int(environment["PEER_BATCH"] ?? "") ?? 500
    durable.scheduling.pollInterval = .milliseconds(Int(environment["PEER_FIRE_POLL_MS"] ?? "") ?? 1_000)
    durable.scheduling.batchSize = Int(environment["PEER_FIRE_BATCH"] ?? "") ?? 500
    durable.scheduling.clockOffset = .seconds(Int(environment["PEER_FIRE_AHEAD_S"] ?? "") ?? 0)
    if let group = environment["PEER_GROUP"] {
        durable.group = .init(name: group, partitions: Int(environment["PEER_PARTITIONS"] ?? "") ?? 16)
    }
    var settings = PostgresEventBridge.Configuration()
    settings.delivery = .durable(durable)
    let node = try ClusterNode(name: "\(channel)_\(consumer)", url: url, channel: channel, configuration: settings)
    node.bridge.register(Ping.self, as: "test.ping.v1")
    node.bridge.register(RoomMessage.self, as: "test.room-message.v1")
    let delay = Double(ProcessInfo.processInfo.environment["PEER_DELAY_MS"] ?? "") ?? 0
    let pings = node.bus.on(Ping.self).next { ping in
        say("got \(ping.from) \(ping.n)")
        if delay > 0 { Thread.sleep(forTimeInterval: delay / 1000) }
    }
    let messages = node.bus.on(RoomMessage.self).next { message in
        say("got \(message.room) \(message.text)")
        if delay > 0 { Thread.sleep(forTimeInterval: delay / 1000) }
    }
    let issues = node.bus.on(BridgeIssue.self).next { issue in
        if case .redelivered(_, let count) = issue { say("redelivered \(count)") }
        if case .expired(_, let count) = issue { say("expired \(count)") }
    }
    try await node.start()
    say("ready")
    while true {
        try await Task.sleep(for: .seconds(3600))
        _ = (pings, messages, issues)  // subscribed until the process is killed
    }
}

/// The whole run, off the main actor (top-level code is main-actor isolated, and the recorder
/// evaluates its condition wherever it waits).
func runPeer() async throws {
    let environment = ProcessInfo.processInfo.environment
    guard let url = DatabaseURL.fromEnvironment else { fail("EVENTBUS_POSTGRES_URL is not set") }
    guard let channel = environment["PEER_CHANNEL"] else { fail("PEER_CHANNEL is not set") }
    let name = environment["PEER_NAME"] ?? "peer"
    let sendCount = Int(environment["PEER_SEND"] ?? "") ?? 100
    let expectCount = Int(environment["PEER_EXPECT"] ?? "") ?? 100
    if let consumer = environment["PEER_CONSUMER"] {
        try await runDurableReceiver(url: url, channel: channel, consumer: consumer)
    }

    let node = try ClusterNode(name: "\(channel)_\(name)", url: url, channel: channel)
    node.bridge.register(Ping.self, as: "test.ping.v1")
    let received = Recorder(Ping.self, on: node.bus)
    try await node.start()
    say("ready")

    for n in 0..<sendCount { try await node.bridge.publish(Ping(from: name, n: n)) }
    say("peer: sent \(sendCount)")

    let remote: @Sendable () -> [Ping] = { received.events.filter { $0.from != name } }
    if !(await received.wait(timeout: .seconds(60)) { _ in remote().count >= expectCount }) {
        fail("received \(remote().count) of \(expectCount)")
    }
    try await Task.sleep(for: .milliseconds(300))  // room for a duplicate or an echo to show up
    let numbers = remote().map(\.n)
    guard numbers == Array(0..<expectCount) else { fail("received out of order or twice: \(numbers.prefix(20))...") }
    let own = received.events.filter { $0.from == name }.map(\.n)
    guard own == Array(0..<sendCount) else { fail("own events delivered locally \(own.count) times, not once each") }
    await node.stop()
    say("peer: received \(expectCount) in order, once each")
}

try await runPeer()
