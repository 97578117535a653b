import EventBus
import EventBusRemote
import Foundation
import Testing

/// An event keyed by its room: a group's partitions split by it.
struct RoomMessage: Event, Codable, Equatable {
    let room: String
    let n: Int
    var eventType: String { room }
}

/// A bridge over a DurableTransport on `store` for `consumer`: its bus, what it received and
/// reported, and its receiving task (started and stopped by the test).
final class DurableNode: Sendable {
    let bus = EventBus()
    let bridge: RemoteBridge
    let pings: Recorded<Ping>
    let rooms: Recorded<RoomMessage>
    let issues: Recorded<BridgeIssue>
    let statuses: Recorded<BridgeStatus>
    private let running = Collected<Task<Void, any Error>>()

    static let reading = DurableReading(batchSize: 5, leaseDuration: .seconds(1), pollInterval: .milliseconds(200))

    init<Store: DurableStore>(
        _ store: Store, consumer: DurableConsumerID, key: Data? = nil,
        registering: (RemoteBridge) -> Void = { $0.register(Ping.self, as: "test.ping.v1") }
    ) {
        var settings = RemoteBridge.Configuration()
        settings.authenticationKey = key
        bridge = RemoteBridge(
            bus: bus, transport: DurableTransport(store: store, consumer: consumer, reading: Self.reading),
            configuration: settings)
        registering(bridge)
        bridge.register(RoomMessage.self, as: "test.room.v1")
        pings = Recorded(Ping.self, on: bus)
        rooms = Recorded(RoomMessage.self, on: bus)
        issues = Recorded(BridgeIssue.self, on: bus)
        statuses = Recorded(BridgeStatus.self, on: bus)
    }

    convenience init<Store: DurableStore>(
        _ store: Store, consumer: String, key: Data? = nil,
        registering: (RemoteBridge) -> Void = { $0.register(Ping.self, as: "test.ping.v1") }
    ) {
        self.init(store, consumer: DurableConsumerID(consumer), key: key, registering: registering)
    }

    deinit {
        for task in running.values { task.cancel() }
    }

    /// Runs the bridge; waits until it listens.
    func start() async {
        let before = statuses.events.count(where: Self.isListening)
        let bridge = self.bridge
        running.append(Task { try await bridge.run() })
        #expect(await statuses.wait { $0.count(where: Self.isListening) > before }, "did not start listening")
    }

    /// Stops the bridge; waits (10 s at most) until its run returned.
    func stop() async {
        guard let task = running.values.last else { return }
        task.cancel()
        let ended = Collected<Bool>()
        Task {
            _ = await task.result
            ended.append(true)
        }
        #expect(await statuses.wait { _ in !ended.values.isEmpty }, "did not stop")
    }

    static func isListening(_ status: BridgeStatus) -> Bool {
        if case .listening = status { true } else { false }
    }

    /// The counts of the issues of one kind.
    func count(_ kind: (BridgeIssue) -> Int?) -> Int {
        issues.events.compactMap(kind).reduce(0, +)
    }
}

/// Ping's shape as version 1 of "test.ping" (the same members: an upcaster reads it as Ping).
private struct PingV1: Codable {
    let from: String
    let n: Int
}

/// Values appended from any thread.
private final class Collected<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `stored` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var stored: [Value] = []

    var values: [Value] { lock.withLock { stored } }

    func append(_ value: Value) {
        lock.withLock { stored.append(value) }
    }
}

@Suite("DurableTransport: durable bridges in one process over an InMemoryDurableStore")
struct DurableTransportTests {
    @Test(
        "a group's two partitions, a bridge each: each gets only its partition's rooms, together every event once, in order per room"
    )
    func partitions() async throws {
        let store = InMemoryDurableStore()
        let shop = DurableNode(store, consumer: "shop")
        let members = (0..<2).map {
            DurableNode(store, consumer: DurableConsumerID(group: "chat", partition: $0, of: 2))
        }
        for member in members { await member.start() }
        let rooms = (0..<6).map { "room-\($0)" }
        for n in 1...60 { try await shop.bridge.publish(RoomMessage(room: rooms[n % 6], n: n)) }
        #expect(await members[0].rooms.wait { _ in members.map(\.rooms.events.count).reduce(0, +) >= 60 })
        try await Task.sleep(for: .milliseconds(100))  // room for a second delivery
        for (index, member) in members.enumerated() {
            let partition = DurablePartition(group: "chat", index: index, count: 2)
            for message in member.rooms.events {
                let hash = RemoteBridge.orderingHash(
                    ofEnvelope: #"{"v":3,"o":"\#(UUID().uuidString)","s":1,"n":"x","k":"\#(message.room)"}"#)
                #expect(partition.contains(hash: hash), "partition \(index) got \(message.room)")
            }
            for room in rooms {
                let numbers = member.rooms.events.filter { $0.room == room }.map(\.n)
                #expect(numbers == numbers.sorted(), "\(room) out of order at partition \(index)")
            }
            #expect(
                member.count { if case .missed(_, let count, _) = $0 { Int(count) } else { nil } } == 0, "no false gap")
        }
        let all = members.flatMap(\.rooms.events).map(\.n)
        #expect(all.sorted() == Array(1...60), "every event once across the partitions")
        for member in members { await member.stop() }
    }

    @Test(
        "a holder that dies mid-batch (its lease lapses): the standby takes over, its batch redelivered and announced")
    func lapsedHolder() async throws {
        let store = InMemoryDurableStore()
        let shop = DurableNode(store, consumer: "shop")
        // The dead holder: it opened the consumer, took a short lease and claimed a batch. The
        // lease is taken last, and long enough that the standby surely starts while it is held,
        // however loaded the machine (with 300 ms, a slow publish let it lapse first: no standby).
        let dead = store.cursor(DurableConsumerID("mailer"), owner: UUID())
        let start = try await dead.open()
        for n in 1...8 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        let epoch = try #require(try await dead.takeLease(for: .seconds(2)))
        let claim = try #require(try await dead.claim(after: start.position, limit: 3, epoch: epoch))
        #expect(claim.count == 3)
        let standby = DurableNode(store, consumer: "mailer")
        await standby.start()
        #expect(await standby.pings.wait { $0.count >= 8 })
        try await Task.sleep(for: .milliseconds(100))
        #expect(standby.pings.events.map(\.n) == Array(1...8))
        #expect(standby.issues.events.contains { if case .standingBy("mailer") = $0 { true } else { false } })
        #expect(standby.count { if case .redelivered("mailer", let count) = $0 { count } else { nil } } == 3)
        await standby.stop()
    }

    @Test("retention while a consumer is stopped: it gets the events kept and reports the others as expired, once")
    func expiredWhileStopped() async throws {
        let store = InMemoryDurableStore()
        let shop = DurableNode(store, consumer: "shop")
        let mailer = DurableNode(store, consumer: "mailer")
        await mailer.start()
        try await shop.bridge.publish(Ping(from: "shop", n: 1))
        #expect(await mailer.pings.wait { $0.count == 1 })
        await mailer.stop()
        for n in 2...11 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(try await store.cleanUp(DurableRetention(count: 3)) == 8)  // 1, passed; 2...8, expired
        await mailer.start()
        #expect(await mailer.pings.wait { $0.count == 4 })
        try await Task.sleep(for: .milliseconds(100))
        #expect(mailer.pings.events.map(\.n) == [1, 9, 10, 11])
        #expect(mailer.count { if case .expired("mailer", let count) = $0 { count } else { nil } } == 7)
        await mailer.stop()
    }

    @Test(
        "with a shared key: signed envelopes round-trip through the store; a bridge with another key holds nothing, refuses them"
    )
    func sharedKey() async throws {
        let store = InMemoryDurableStore()
        let shop = DurableNode(store, consumer: "shop", key: key(1))
        let mailer = DurableNode(store, consumer: "mailer", key: key(1))
        let stranger = DurableNode(store, consumer: "stranger", key: key(2))
        await mailer.start()
        await stranger.start()
        for n in 1...3 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await mailer.pings.wait { $0.count == 3 })
        #expect(
            await stranger.issues.wait {
                $0.count(where: { if case .unauthenticated = $0 { true } else { false } }) == 3
            })
        #expect(stranger.pings.events.isEmpty)
        await mailer.stop()
        await stranger.stop()
    }

    @Test("the README's durable quick start is ReadmeDurableQuickStart.swift verbatim, and mails orders 1 and 2")
    func readmeQuickStart() async throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let readme = try String(contentsOf: directory.appending(path: "../../README.md"), encoding: .utf8)
        let example = try String(
            contentsOf: directory.appending(path: "ReadmeDurableQuickStart.swift"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Durable delivery in one process"))
        let start = try #require(readme.range(of: "```swift\n", range: section.upperBound..<readme.endIndex))
        let end = try #require(readme.range(of: "```\n", range: start.upperBound..<readme.endIndex))
        #expect(String(readme[start.upperBound..<end.lowerBound]) == example)
        let result = Collected<[Int]>()
        let running = Task { result.append(try await durableQuickStart()) }
        let deadline = ContinuousClock.now + .seconds(10)
        while result.values.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        running.cancel()
        #expect(result.values == [[1, 2]])
    }

    @Test(
        "an event version the consumer does not read: it holds there (reported once), nothing after it delivered; an upgraded bridge of the consumer delivers it and the rest"
    )
    func heldUntilUpgraded() async throws {
        let store = InMemoryDurableStore()
        let old = DurableNode(store, consumer: "old-shop") { $0.register(Ping.self, as: "test.ping") }
        let new = DurableNode(store, consumer: "new-shop") { $0.register(Ping.self, as: "test.ping", version: 2) }
        let mailer = DurableNode(store, consumer: "mailer") { $0.register(Ping.self, as: "test.ping") }
        await mailer.start()
        try await old.bridge.publish(Ping(from: "old", n: 1))
        try await new.bridge.publish(Ping(from: "new", n: 2))
        try await old.bridge.publish(Ping(from: "old", n: 3))
        #expect(await mailer.issues.wait { $0.contains { if case .held("mailer", _) = $0 { true } else { false } } })
        try await Task.sleep(for: .milliseconds(500))  // two polls: the hold is not reported again
        #expect(mailer.pings.events.map(\.n) == [1])
        #expect(mailer.issues.events.count { if case .held = $0 { true } else { false } } == 1)
        await mailer.stop()
        let upgraded = DurableNode(store, consumer: "mailer") { bridge in
            bridge.register(
                Ping.self, as: "test.ping", version: 2,
                upcasting: [.from(PingV1.self, version: 1, upcast: { Ping(from: $0.from, n: $0.n) })])
        }
        await upgraded.start()
        #expect(await upgraded.pings.wait { $0.count == 2 })
        try await Task.sleep(for: .milliseconds(100))
        #expect(upgraded.pings.events.map(\.n) == [2, 3])
        #expect(!upgraded.issues.events.contains { if case .redelivered = $0 { true } else { false } })
        await upgraded.stop()
    }

    @Test(
        "scheduled events through DurableScheduler on the store: delivered once when due, not before; a cancelled one never"
    )
    func scheduled() async throws {
        let store = InMemoryDurableStore()
        let shop = DurableNode(store, consumer: "shop", key: key(3))
        let mailer = DurableNode(store, consumer: "mailer", key: key(3))
        await mailer.start()
        let scheduler = DurableScheduler(store: store, bridge: shop.bridge, channel: "durable")
        let firer = Task { await scheduler.fireUntilCancelled(every: .milliseconds(20)) }
        defer { firer.cancel() }
        let scheduledAt = ContinuousClock.now
        _ = try await scheduler.publish(Ping(from: "shop", n: 1), after: .milliseconds(300))
        let dropped = try await scheduler.publish(Ping(from: "shop", n: 2), after: .milliseconds(300))
        #expect(try await scheduler.cancel(dropped) == .cancelled)
        #expect(await mailer.pings.wait { $0.count == 1 })
        #expect(ContinuousClock.now - scheduledAt >= .milliseconds(300), "delivered before it was due")
        try await Task.sleep(for: .milliseconds(200))
        #expect(mailer.pings.events == [Ping(from: "shop", n: 1)])
        #expect(mailer.issues.events.isEmpty, "\(mailer.issues.events)")
        await mailer.stop()
    }

    @Test("10,000 events, the consumer stopped and run again midway, cleanups between: each once, in order")
    func volume() async throws {
        let store = InMemoryDurableStore()
        let shop = DurableNode(store, consumer: "shop")
        let mailer = DurableNode(store, consumer: "mailer")
        await mailer.start()
        let started = ContinuousClock.now
        for burst in 0..<20 {
            for n in (burst * 500 + 1)...(burst * 500 + 500) { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
            if burst == 9 { await mailer.stop() }
            if burst == 14 { await mailer.start() }
            _ = try await store.cleanUp(DurableRetention())
        }
        #expect(await mailer.pings.wait { $0.count >= 10_000 })
        let elapsed = ContinuousClock.now - started
        try await Task.sleep(for: .milliseconds(100))
        let numbers = mailer.pings.events.map(\.n)
        #expect(numbers == Array(1...10_000), "\(numbers.count) delivered, \(Set(numbers).count) distinct")
        #expect(mailer.issues.events.isEmpty, "\(mailer.issues.events.prefix(3))")
        _ = try await store.cleanUp(DurableRetention())
        print("durable in memory: 10,000 events in \(elapsed), \(store.count) kept after the last cleanup")
        await mailer.stop()
    }
}
