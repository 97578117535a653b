import EventBus
import EventBusRemote
import Foundation
import Testing

/// Values appended from any thread.
final class ComboBox<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `stored` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var stored: [Value] = []

    var values: [Value] { lock.withLock { stored } }

    func append(_ value: Value) {
        lock.withLock { stored.append(value) }
    }
}

/// A switch flipped from any thread.
final class ComboFlag: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var value = false

    var isOn: Bool {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// An InMemoryDurableStore whose renewals stall while `stalled` is on (a holder whose connection
/// hangs: its lease lapses), waking its readers as the store does.
struct StallingStore: WakingDurableStore {
    let base: InMemoryDurableStore
    let stalled = ComboFlag()

    func append(_ envelopes: [String]) async throws { try await base.append(envelopes) }

    func cursor(_ consumer: DurableConsumerID, owner: UUID) -> StallingCursor {
        StallingCursor(base: base.cursor(consumer, owner: owner), stalled: stalled)
    }

    func cleanUp(_ retention: DurableRetention) async throws -> Int { try await base.cleanUp(retention) }
    func register(_ waker: DurableWaker) { base.register(waker) }
    func unregister(_ waker: DurableWaker) { base.unregister(waker) }
}

struct StallingCursor: DurableCursor {
    let base: InMemoryDurableCursor
    let stalled: ComboFlag

    var id: DurableConsumerID { base.id }
    var leaseLost: any Error { base.leaseLost }

    func open() async throws -> DurableCursorState<Int64> { try await base.open() }
    func takeLease(for duration: Duration) async throws -> Int64? { try await base.takeLease(for: duration) }

    func renewLease(_ epoch: Int64, for duration: Duration) async throws -> Bool {
        while stalled.isOn { try await Task.sleep(for: .milliseconds(5)) }
        return try await base.renewLease(epoch, for: duration)
    }

    func releaseLease(_ epoch: Int64?) async throws { try await base.releaseLease(epoch) }

    func claim(after position: Int64, limit: Int, epoch: Int64) async throws -> DurableClaim<Int64>? {
        try await base.claim(after: position, limit: limit, epoch: epoch)
    }

    func read(after position: Int64, through last: Int64, limit: Int) async throws -> [DurableEvent<Int64>] {
        try await base.read(after: position, through: last, limit: limit)
    }

    func acknowledge(_ position: Int64, claim: DurableClaimUpdate<Int64>, epoch: Int64) async throws -> Int {
        try await base.acknowledge(position, claim: claim, epoch: epoch)
    }
}

/// A bridge over a DurableTransport with its own reading settings, an optional slow synchronous
/// subscriber, and what it received and reported; started and stopped by the test.
final class ComboNode: Sendable {
    let bus = EventBus()
    let bridge: RemoteBridge
    let pings: Recorded<Ping>
    let rooms: Recorded<RoomMessage>
    let issues: Recorded<BridgeIssue>
    let statuses: Recorded<BridgeStatus>
    private let running = ComboBox<Task<Void, any Error>>()
    private let slowToken: EventToken?

    static let reading = DurableReading(batchSize: 5, leaseDuration: .seconds(1), pollInterval: .milliseconds(100))

    init<Store: DurableStore>(
        _ store: Store, consumer: DurableConsumerID, reading: DurableReading = ComboNode.reading, key: Data? = nil,
        slow: TimeInterval? = nil, registering: (RemoteBridge) -> Void = { $0.register(Ping.self, as: "test.ping.v1") }
    ) {
        var settings = RemoteBridge.Configuration()
        settings.authenticationKey = key
        bridge = RemoteBridge(
            bus: bus, transport: DurableTransport(store: store, consumer: consumer, reading: reading),
            configuration: settings)
        registering(bridge)
        bridge.register(RoomMessage.self, as: "test.room.v1")
        pings = Recorded(Ping.self, on: bus)
        rooms = Recorded(RoomMessage.self, on: bus)
        issues = Recorded(BridgeIssue.self, on: bus)
        statuses = Recorded(BridgeStatus.self, on: bus)
        let bus = self.bus
        slowToken = slow.map { delay in bus.on(Ping.self).next { _ in Thread.sleep(forTimeInterval: delay) } }
    }

    convenience init<Store: DurableStore>(
        _ store: Store, consumer: String, reading: DurableReading = ComboNode.reading, key: Data? = nil,
        slow: TimeInterval? = nil, registering: (RemoteBridge) -> Void = { $0.register(Ping.self, as: "test.ping.v1") }
    ) {
        self.init(
            store, consumer: DurableConsumerID(consumer), reading: reading, key: key, slow: slow,
            registering: registering)
    }

    deinit {
        for task in running.values { task.cancel() }
        slowToken?.dispose()
    }

    /// Runs the bridge; waits (2 s at most) until it listens.
    func start() async {
        let before = statuses.events.count(where: Self.isListening)
        let bridge = self.bridge
        running.append(Task { try await bridge.run() })
        #expect(
            await wait(.seconds(2)) { self.statuses.events.count(where: Self.isListening) > before }, "not listening")
    }

    /// Stops the bridge; waits (2 s at most) until its run returned.
    func stop() async {
        guard let task = running.values.last else { return }
        task.cancel()
        let ended = ComboFlag()
        Task {
            _ = await task.result
            ended.isOn = true
        }
        #expect(await wait(.seconds(2)) { ended.isOn }, "did not stop")
    }

    static func isListening(_ status: BridgeStatus) -> Bool {
        if case .listening = status { true } else { false }
    }

    /// Reports of loss that name an origin (`missed`, `missedUncounted`).
    var gapReports: [BridgeIssue] {
        issues.events.filter {
            switch $0 {
            case .missed, .missedUncounted: true
            default: false
            }
        }
    }

    var expired: Int { issues.events.reduce(0) { if case .expired(_, let count) = $1 { $0 + count } else { $0 } } }
    var redelivered: Int {
        issues.events.reduce(0) { if case .redelivered(_, let count) = $1 { $0 + count } else { $0 } }
    }
    var held: Int { issues.events.count { if case .held = $0 { true } else { false } } }
    var standingBy: Int { issues.events.count { if case .standingBy = $0 { true } else { false } } }
}

/// Waits until `condition` holds, `limit` at most; whether it holds.
func wait(_ limit: Duration, until condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}

/// Whether `numbers` are strictly increasing (in order, none twice).
func increasing(_ numbers: [Int]) -> Bool {
    zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 }
}

@Suite("Durable core: the README's promises where its features meet", .timeLimit(.minutes(1)))
struct DurableCombinationTests {
    @Test(
        "a consumer stopped mid-batch (slow subscriber), retention while it stops, restarted: each event delivered once or expired once, no gap reported"
    )
    func stopMidBatchRetentionRestart() async throws {
        let store = InMemoryDurableStore()
        let shop = ComboNode(store, consumer: "shop")
        let mailer = ComboNode(store, consumer: "mailer", slow: 0.02)
        await mailer.start()
        for n in 1...20 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await wait(.seconds(2)) { mailer.pings.events.count >= 2 })
        async let stopped: Void = mailer.stop()
        let during = try await store.cleanUp(DurableRetention(count: 3))  // the batch in progress is kept
        await stopped
        let after = try await store.cleanUp(DurableRetention(count: 3))
        for n in 21...25 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        await mailer.start()
        #expect(await wait(.seconds(2)) { mailer.pings.events.last?.n == 25 })
        try await Task.sleep(for: .milliseconds(50))
        let delivered = mailer.pings.events.map(\.n)
        #expect(increasing(delivered), "\(delivered)")
        #expect(delivered.count + mailer.expired == 25, "\(delivered.count) delivered, \(mailer.expired) expired")
        #expect(mailer.expired > 0, "retention deleted nothing unread (\(during), \(after) deleted)")
        #expect(mailer.gapReports.isEmpty, "a loss reported twice: \(mailer.gapReports)")
        #expect(mailer.redelivered == 0)
        await mailer.stop()
    }

    @Test(
        "retention while a running consumer's slow batch is in progress: the batch kept, the deleted events reported expired once, no gap reported"
    )
    func retentionDuringBatch() async throws {
        let store = InMemoryDurableStore()
        let shop = ComboNode(store, consumer: "shop")
        let mailer = ComboNode(store, consumer: "mailer", slow: 0.02)
        await mailer.start()
        for n in 1...20 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await wait(.seconds(1)) { store.count == 20 && mailer.pings.events.count >= 1 })
        let deleted = try await store.cleanUp(DurableRetention(count: 3))
        #expect(await wait(.seconds(2)) { mailer.pings.events.last?.n == 20 })
        try await Task.sleep(for: .milliseconds(50))
        let delivered = mailer.pings.events.map(\.n)
        #expect(increasing(delivered), "\(delivered)")
        #expect(deleted > 0 && delivered.count + mailer.expired == 20, "\(delivered), \(mailer.expired) expired")
        #expect(mailer.gapReports.isEmpty, "a loss reported twice: \(mailer.gapReports)")
        await mailer.stop()
    }

    @Test("an expired report excuses as many skipped sequences from the store, no more; a live gap is still counted")
    func expiredExcusesGaps() async throws {
        let bridge = RemoteBridge(bus: EventBus(), transport: InMemoryNetwork().makeTransport())
        bridge.register(Ping.self, as: "test.ping.v1")
        let issues = Recorded(BridgeIssue.self, on: bridge.bus)
        let origin = UUID()
        func ping(_ n: Int) -> String {
            envelope(origin: origin, sequence: UInt64(n), payload: #"{"from":"x","n":\#(n)}"#)
        }
        _ = await bridge.inbox.deliverAndWait([ping(1)])
        bridge.inbox.expired(consumer: "c", count: 3)
        _ = await bridge.inbox.deliverAndWait([ping(5), ping(10)])  // 2, 3, 4 expired; 6...9 missed
        #expect(await wait(.seconds(1)) { issues.events.count == 2 })
        try await Task.sleep(for: .milliseconds(20))
        #expect(
            issues.events.map(\.description) == [
                BridgeIssue.expired(consumer: "c", count: 3).description,
                BridgeIssue.missed(origin: origin, count: 4, before: 10).description,
            ])
    }

    @Test(
        "a holder killed mid-batch, then retention of 0: its claimed batch is kept and announced redelivered, the rest expired, no gap reported"
    )
    func killedMidBatchRetention() async throws {
        let store = InMemoryDurableStore()
        let shop = ComboNode(store, consumer: "shop")
        let dead = store.cursor(DurableConsumerID("mailer"), owner: UUID())
        let start = try await dead.open()
        let epoch = try #require(try await dead.takeLease(for: .milliseconds(100)))
        for n in 1...8 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await wait(.seconds(1)) { store.count == 8 })
        let claim = try #require(try await dead.claim(after: start.position, limit: 3, epoch: epoch))
        #expect(try await store.cleanUp(DurableRetention(count: 0)) == 5)
        let standby = ComboNode(store, consumer: "mailer")
        await standby.start()
        for n in 9...10 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await wait(.seconds(2)) { standby.pings.events.last?.n == 10 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(standby.pings.events.map(\.n) == [1, 2, 3, 9, 10])
        #expect(standby.redelivered == claim.count)
        #expect(standby.expired == 5)
        #expect(standby.gapReports.isEmpty, "a loss reported twice: \(standby.gapReports)")
        await standby.stop()
    }

    @Test(
        "a holder whose lease lapses mid-batch (renewals stalled, a slow subscriber): fenced, the standby redelivers it announced, nothing lost; the old holder stands by, then takes over with no false gap"
    )
    func stalledHolder() async throws {
        let base = InMemoryDurableStore()
        let stalling = StallingStore(base: base)
        let reading = DurableReading(batchSize: 5, leaseDuration: .milliseconds(300), pollInterval: .milliseconds(50))
        let shop = ComboNode(base, consumer: "shop")
        let holder = ComboNode(stalling, consumer: "mailer", reading: reading, slow: 0.1)
        let standby = ComboNode(base, consumer: "mailer", reading: reading)
        await holder.start()
        await standby.start()
        #expect(await wait(.seconds(1)) { standby.standingBy == 1 })
        stalling.stalled.isOn = true
        for n in 1...10 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await wait(.seconds(2)) { standby.pings.events.last?.n == 10 })
        #expect(await wait(.seconds(1)) { holder.standingBy >= 1 }, "the old holder does not stand by")
        stalling.stalled.isOn = false
        // The holder handled 1...m, its last batch unacknowledged; the standby k...10, announcing
        // the overlap.
        let handled = holder.pings.events.map(\.n)
        let took = standby.pings.events.map(\.n)
        let first = try #require(took.first)
        #expect(took == Array(first...10), "\(took)")
        #expect(handled == Array(1...max(1, handled.count)) && handled.count >= first - 1, "\(handled)")
        #expect(standby.redelivered == handled.count - (first - 1) && standby.redelivered > 0)
        #expect(holder.statuses.events.contains { if case .interrupted = $0 { true } else { false } })
        await standby.stop()  // the old holder takes over
        for n in 11...13 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await wait(.seconds(2)) { holder.pings.events.last?.n == 13 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(holder.pings.events.map(\.n) == handled + [11, 12, 13])
        #expect(holder.redelivered == 0)
        #expect(holder.gapReports.isEmpty, "a false loss: \(holder.gapReports)")
        #expect(standby.gapReports.isEmpty, "a false loss: \(standby.gapReports)")
        await holder.stop()
    }

    @Test(
        "a stop whose batch outlasts the lease (slow subscriber) with a standby: the lease is renewed meanwhile, the standby takes over after it and delivers nothing again"
    )
    func stopOutlastingLease() async throws {
        let store = InMemoryDurableStore()
        let reading = DurableReading(batchSize: 5, leaseDuration: .milliseconds(300), pollInterval: .milliseconds(50))
        let shop = ComboNode(store, consumer: "shop")
        let holder = ComboNode(store, consumer: "mailer", reading: reading, slow: 0.1)
        let standby = ComboNode(store, consumer: "mailer", reading: reading)
        await holder.start()
        await standby.start()
        #expect(await wait(.seconds(1)) { standby.standingBy == 1 })
        for n in 1...10 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await wait(.seconds(1)) { holder.pings.events.count >= 2 })
        await holder.stop()  // waits for the batch in progress (up to 500 ms, longer than the lease)
        #expect(await wait(.seconds(2)) { (holder.pings.events + standby.pings.events).count >= 10 })
        try await Task.sleep(for: .milliseconds(50))
        #expect((holder.pings.events + standby.pings.events).map(\.n) == Array(1...10))
        #expect(standby.redelivered == 0 && standby.gapReports.isEmpty, "\(standby.issues.events)")
        await standby.stop()
    }

    @Test("two bridges of one consumer taking turns: neither reports the other's events as missed")
    func alternatingBridges() async throws {
        let store = InMemoryDurableStore()
        let shop = ComboNode(store, consumer: "shop")
        let first = ComboNode(store, consumer: "mailer")
        let second = ComboNode(store, consumer: "mailer")
        var n = 0
        for turn in 0..<4 {
            let node = turn % 2 == 0 ? first : second
            await node.start()
            for _ in 0..<3 {
                n += 1
                try await shop.bridge.publish(Ping(from: "shop", n: n))
            }
            let last = n
            #expect(await wait(.seconds(2)) { node.pings.events.last?.n == last })
            await node.stop()
        }
        let all = (first.pings.events + second.pings.events).map(\.n).sorted()
        #expect(all == Array(1...12))
        #expect(first.gapReports.isEmpty && second.gapReports.isEmpty, "\(first.gapReports) \(second.gapReports)")
    }

    /// Reads versions 1 and 2 of "test.ping" (version 1 upcast).
    static func upgraded(_ bridge: RemoteBridge) {
        bridge.register(
            Ping.self, as: "test.ping", version: 2,
            upcasting: [.from(ComboPingV1.self, version: 1, upcast: { Ping(from: $0.from, n: $0.n) })])
    }

    static func old(_ bridge: RemoteBridge) { bridge.register(Ping.self, as: "test.ping") }

    @Test(
        "a held event through a takeover, retention and a restart: never acknowledged, reported once per holder; the upgraded bridge delivers it and the rest once, in order"
    )
    func heldThroughTakeoverAndRetention() async throws {
        let store = InMemoryDurableStore()
        let oldShop = ComboNode(store, consumer: "old-shop", registering: Self.old)
        let newShop = ComboNode(store, consumer: "new-shop", registering: Self.upgraded)
        let first = ComboNode(store, consumer: "mailer", registering: Self.old)
        let second = ComboNode(store, consumer: "mailer", registering: Self.old)
        await first.start()
        await second.start()
        try await oldShop.bridge.publish(Ping(from: "old", n: 1))
        try await newShop.bridge.publish(Ping(from: "new", n: 2))
        for n in 3...6 { try await oldShop.bridge.publish(Ping(from: "old", n: n)) }
        #expect(await wait(.seconds(1)) { first.held == 1 })
        await first.stop()  // the standby takes over and holds too
        #expect(await wait(.seconds(1)) { second.held == 1 })
        #expect(await wait(.seconds(1)) { store.count == 6 })
        #expect(try await store.cleanUp(DurableRetention(count: 5)) == 1)  // 1, passed; the held one kept
        try await Task.sleep(for: .milliseconds(250))  // two polls: no second report
        await second.stop()
        #expect(first.pings.events.map(\.n) == [1] && second.pings.events.isEmpty)
        #expect(first.held == 1 && second.held == 1)
        let upgraded = ComboNode(store, consumer: "mailer", registering: Self.upgraded)
        await upgraded.start()
        #expect(await wait(.seconds(1)) { upgraded.pings.events.count == 5 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(upgraded.pings.events.map(\.n) == [2, 3, 4, 5, 6])
        for node in [first, second, upgraded] {
            #expect(node.gapReports.isEmpty && node.expired == 0 && node.redelivered == 0, "\(node.issues.events)")
        }
        await upgraded.stop()
    }

    @Test("a held event across a store interruption: reported once by the bridge that holds it, never acknowledged")
    func heldAcrossInterruption() async throws {
        let store = FaultyStore()
        let oldShop = ComboNode(store, consumer: "old-shop", registering: Self.old)
        let newShop = ComboNode(store, consumer: "new-shop", registering: Self.upgraded)
        let mailer = ComboNode(store, consumer: "mailer", registering: Self.old)
        await mailer.start()
        try await oldShop.bridge.publish(Ping(from: "old", n: 1))
        try await newShop.bridge.publish(Ping(from: "new", n: 2))
        try await oldShop.bridge.publish(Ping(from: "old", n: 3))
        #expect(await wait(.seconds(1)) { mailer.held == 1 })
        store.faults.fail("claim")
        #expect(
            await wait(.seconds(1)) {
                mailer.statuses.events.contains { if case .resumed = $0 { true } else { false } }
            })
        try await Task.sleep(for: .milliseconds(250))  // two polls after the resume
        #expect(mailer.pings.events.map(\.n) == [1])
        #expect(mailer.held == 1, "\(mailer.issues.events)")
        await mailer.stop()
    }

    @Test(
        "retention deletes the event a consumer holds at: reported expired with those after it, once, not as a gap; the consumer goes on"
    )
    func heldEventExpires() async throws {
        let store = InMemoryDurableStore()
        let oldShop = ComboNode(store, consumer: "old-shop", registering: Self.old)
        let newShop = ComboNode(store, consumer: "new-shop", registering: Self.upgraded)
        let mailer = ComboNode(store, consumer: "mailer", registering: Self.old)
        await mailer.start()
        try await oldShop.bridge.publish(Ping(from: "old", n: 1))
        try await newShop.bridge.publish(Ping(from: "new", n: 2))
        for n in 3...6 { try await oldShop.bridge.publish(Ping(from: "old", n: n)) }
        #expect(await wait(.seconds(1)) { mailer.held == 1 })
        #expect(await wait(.seconds(1)) { store.count == 6 }, "a publish returns before its append")
        // 1, passed; 2, 3, 4 expired, once the holder is between two tries (a try claims them).
        var deleted = 0
        let deadline = ContinuousClock.now + .seconds(1)
        while deleted < 4, ContinuousClock.now < deadline {
            deleted += try await store.cleanUp(DurableRetention(count: 2))
            try await Task.sleep(for: .milliseconds(3))
        }
        #expect(deleted == 4)
        #expect(await wait(.seconds(1)) { mailer.pings.events.count == 3 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(mailer.pings.events.map(\.n) == [1, 5, 6])
        #expect(mailer.expired == 3 && mailer.held == 1)
        #expect(mailer.gapReports.isEmpty, "a loss reported twice: \(mailer.gapReports)")
        await mailer.stop()
    }

    @Test(
        "a group's two partitions, keyed and unkeyed events of two publishers, one partition's bridge restarted meanwhile: each event once, in order per key and origin, no loss reported"
    )
    func partitionsWithRestart() async throws {
        let store = InMemoryDurableStore()
        let shops = [ComboNode(store, consumer: "shop-a"), ComboNode(store, consumer: "shop-b")]
        let members = (0..<2).map { ComboNode(store, consumer: DurableConsumerID(group: "chat", partition: $0, of: 2)) }
        for member in members { await member.start() }
        for n in 1...60 {
            let shop = shops[n % 2]
            if n % 3 == 0 {
                try await shop.bridge.publish(Ping(from: "\(n % 2)", n: n))
            } else {
                try await shop.bridge.publish(RoomMessage(room: "room-\(n % 5)", n: n))
            }
            if n == 20 { await members[1].stop() }
            if n == 40 { await members[1].start() }
        }
        let total = { members.map { $0.pings.events.count + $0.rooms.events.count }.reduce(0, +) }
        #expect(await wait(.seconds(2)) { total() >= 60 })
        try await Task.sleep(for: .milliseconds(50))
        let all = members.flatMap { $0.pings.events.map(\.n) + $0.rooms.events.map(\.n) }
        #expect(all.sorted() == Array(1...60), "each event once across the partitions")
        for member in members {
            for room in 0..<5 { #expect(increasing(member.rooms.events.filter { $0.room == "room-\(room)" }.map(\.n))) }
            for origin in ["0", "1"] { #expect(increasing(member.pings.events.filter { $0.from == origin }.map(\.n))) }
            let loss = member.issues.events.filter {
                switch $0 {
                case .missed, .missedUncounted, .expired, .olderThanWindow, .duplicateDropped, .redelivered: true
                default: false
                }
            }
            #expect(loss.isEmpty, "\(loss)")
        }
        for member in members { await member.stop() }
    }

    @Test(
        "retention while one partition's member is stopped: it reports only its own partition's deleted events as expired, the other member loses nothing"
    )
    func partitionRetention() async throws {
        let store = InMemoryDurableStore()
        let shop = ComboNode(store, consumer: "shop")
        let members = (0..<2).map { ComboNode(store, consumer: DurableConsumerID(group: "chat", partition: $0, of: 2)) }
        for member in members { await member.start() }
        for n in 1...10 { try await shop.bridge.publish(RoomMessage(room: "room-\(n % 4)", n: n)) }
        let received = { members.map(\.rooms.events.count).reduce(0, +) }
        #expect(await wait(.seconds(1)) { received() == 10 })
        await members[1].stop()
        for n in 11...40 { try await shop.bridge.publish(RoomMessage(room: "room-\(n % 4)", n: n)) }
        #expect(
            await wait(.seconds(1)) { store.count >= 30 && members[0].rooms.events.last.map { $0.n > 30 } ?? false })
        try await Task.sleep(for: .milliseconds(30))  // the running member between two batches
        _ = try await store.cleanUp(DurableRetention(count: 4))
        await members[1].start()
        #expect(await wait(.seconds(1)) { members[1].rooms.events.last?.n ?? 0 >= 37 })
        try await Task.sleep(for: .milliseconds(50))
        let partition = DurablePartition(group: "chat", index: 1, count: 2)
        let ownAfterStop = (11...40).filter { n in
            partition.contains(
                hash: RemoteBridge.orderingHash(
                    ofEnvelope: #"{"v":3,"o":"\#(UUID().uuidString)","s":1,"n":"x","k":"room-\#(n % 4)"}"#))
        }
        let gotAfterStop = members[1].rooms.events.map(\.n).filter { $0 > 10 }
        #expect(increasing(gotAfterStop))
        #expect(
            gotAfterStop.count + members[1].expired == ownAfterStop.count,
            "\(gotAfterStop) + \(members[1].expired) expired of \(ownAfterStop)")
        #expect(
            members[0].expired == 0
                && members[0].rooms.events.map(\.n).filter { $0 > 10 }.count == 30 - ownAfterStop.count)
        for member in members { #expect(member.gapReports.isEmpty, "\(member.gapReports)") }
        for member in members { await member.stop() }
    }

    @Test(
        "scheduled events fired by two firers at once while the consumer restarts, cancels racing them: each fired event once, a cancelled one never"
    )
    func scheduledTwoFirers() async throws {
        let store = InMemoryDurableStore()
        let shops = [
            ComboNode(store, consumer: "shop-a", key: key(7)), ComboNode(store, consumer: "shop-b", key: key(7)),
        ]
        let mailer = ComboNode(store, consumer: "mailer", key: key(7))
        await mailer.start()
        let schedulers = shops.map { DurableScheduler(store: store, bridge: $0.bridge, channel: "durable") }
        var ids: [UUID] = []
        for n in 1...40 {
            ids.append(try await schedulers[0].publish(Ping(from: "s", n: n), after: .milliseconds(10 * (n % 20))))
        }
        let firers = schedulers.map { scheduler in
            Task { await scheduler.fireUntilCancelled(every: .milliseconds(2), batchSize: 3) }
        }
        defer { for firer in firers { firer.cancel() } }
        var outcomes: [Int: ScheduledEventCancellation] = [:]
        for (index, id) in ids.enumerated() where index % 4 == 0 {
            outcomes[index + 1] = try await schedulers[1].cancel(id)
            if index == 16 { await mailer.stop() }
            if index == 24 { await mailer.start() }
            try await Task.sleep(for: .milliseconds(10))
        }
        let cancelled = Set(outcomes.filter { $0.value == .cancelled }.keys)
        #expect(outcomes.values.allSatisfy { $0 == .cancelled || $0 == .alreadyFired }, "\(outcomes)")
        let expected = Set(1...40).subtracting(cancelled)
        #expect(await wait(.seconds(2)) { mailer.pings.events.count >= expected.count })
        try await Task.sleep(for: .milliseconds(50))
        let delivered = mailer.pings.events.map(\.n)
        #expect(delivered.count == expected.count && Set(delivered) == expected, "\(delivered.sorted())")
        #expect(
            mailer.issues.events.filter { if case .standingBy = $0 { false } else { true } }.isEmpty,
            "\(mailer.issues.events)")
        print(
            "scheduled, two firers: \(delivered.count) fired, \(cancelled.count) cancelled, \(outcomes.count - cancelled.count) fired before their cancel"
        )
        await mailer.stop()
    }

    @Test("300 cancels racing two firers event by event: each event fired once or cancelled, as each cancel says")
    func cancelRacingFirers() async throws {
        let store = InMemoryDurableStore()
        let shop = ComboNode(store, consumer: "shop")
        let scheduler = DurableScheduler(store: store, bridge: shop.bridge, channel: "durable")
        let reader = store.cursor(DurableConsumerID("audit"), owner: UUID())
        _ = try await reader.open()
        var ids: [UUID] = []
        for n in 1...300 { ids.append(try await scheduler.publish(Ping(from: "s", n: n), after: .zero)) }
        let firers = (0..<2).map { _ in
            Task {
                var fired = 0
                while !Task.isCancelled {
                    let taken = try await store.fireDue(lookingAhead: .zero, limit: 1) { $0.id.uuidString }
                    fired += taken
                    if taken == 0 { return fired }
                    await Task.yield()
                }
                return fired
            }
        }
        var outcomes: [UUID: ScheduledEventCancellation] = [:]
        for id in ids { outcomes[id] = try await scheduler.cancel(id) }
        let fired = try await firers[0].value + firers[1].value
        let epoch = try #require(try await reader.takeLease(for: .seconds(5)))
        let claim = try await reader.claim(after: 0, limit: 1_000, epoch: epoch)
        let stored = try await reader.read(after: 0, through: claim?.last ?? 0, limit: 1_000).map(\.envelope)
        #expect(stored.count == Set(stored).count && stored.count == fired, "each fired once")
        let alreadyFired = Set(outcomes.filter { $0.value == .alreadyFired }.keys.map(\.uuidString))
        #expect(Set(stored) == alreadyFired, "\(stored.count) stored, \(alreadyFired.count) said fired")
        #expect(outcomes.values.allSatisfy { $0 == .cancelled || $0 == .alreadyFired })
        print("cancels racing two firers: \(fired) fired, \(300 - fired) cancelled")
    }

    @Test(
        "two firing passes of one bridge appended out of order, further apart than the duplicate window: every event delivered from the store"
    )
    func transactionalOutOfOrder() async throws {
        let store = InMemoryDurableStore()
        let shop = ComboNode(store, consumer: "shop")
        let mailer = ComboNode(store, consumer: "mailer", reading: DurableReading(batchSize: 500))
        await mailer.start()
        await shop.start()  // the firing bridge reads its own echo too
        let scheduler = DurableScheduler(store: store, bridge: shop.bridge, channel: "durable")
        // What two passes do when the second appends first: each seals its events (the bridge's
        // transactional series), then appends them.
        func seal(_ numbers: ClosedRange<Int>) throws -> [String] {
            try numbers.map { n in
                let id = UUID()
                let pending = try scheduler.pendingEvent(for: Ping(from: "s", n: n), id: id)
                return try shop.bridge.seal(
                    pending, binding: DurableScheduler<InMemoryDurableStore>.binding(channel: "durable", id: id))
            }
        }
        let firstPass = try seal(1...300)
        let secondPass = try seal(301...600)
        try await store.append(secondPass)
        try await store.append(firstPass)
        #expect(await wait(.seconds(2)) { mailer.pings.events.count >= 600 && shop.pings.events.count >= 600 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(Set(mailer.pings.events.map(\.n)) == Set(1...600), "\(mailer.pings.events.count) of 600")
        #expect(Set(shop.pings.events.map(\.n)) == Set(1...600), "\(shop.pings.events.count) of 600 at the firer")
        let issues = mailer.issues.events + shop.issues.events
        #expect(issues.isEmpty, "\(issues.count) issues, the first \(issues.first.map { "\($0)" } ?? "")")
        await mailer.stop()
        await shop.stop()
    }

    @Test(
        "dead letters: cleanUp never deletes one; requeued while the holder changes, each marked once and listed as requeued"
    )
    func deadLettersAcrossHolders() async throws {
        let store = InMemoryDurableStore()
        let shop = ComboNode(store, consumer: "shop")
        let first = ComboNode(store, consumer: "mailer")
        let second = ComboNode(store, consumer: "mailer")
        await first.start()
        await second.start()
        for n in 1...4 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await wait(.seconds(1)) { first.pings.events.count == 4 })
        let events = try await store.cursor(DurableConsumerID("audit"), owner: UUID()).read(
            after: 0, through: 4, limit: 10)
        for event in events.prefix(3) {
            _ = try await store.deadLetter(event, of: "mailer", wireName: "test.ping.v1", attempts: 3, reason: "boom")
        }
        var deleted = 0
        let deadline = ContinuousClock.now + .seconds(1)
        while store.count > 0, ContinuousClock.now < deadline {  // the last batch acknowledged
            deleted += try await store.cleanUp(DurableRetention(count: 0))
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(deleted == 4 && store.count == 0)
        async let handedOver: Void = first.stop()
        async let marked = store.requeueDeadLetters(nil, of: "mailer")
        let (count, _) = try await (marked, handedOver)
        #expect(count == 3)
        #expect(await wait(.seconds(1)) { second.redelivered == 0 && second.statuses.events.count >= 1 })
        #expect(try await store.requeueDeadLetters(nil, of: "mailer") == 0, "marked twice")
        let letters = try await store.deadLetters(of: "mailer", after: 0, limit: 10)
        #expect(letters.map(\.eventID) == events.prefix(3).map(\.position))
        #expect(letters.allSatisfy { $0.requeuedAt != nil && $0.envelope.contains("\"n\":") })
        try await shop.bridge.publish(Ping(from: "shop", n: 5))
        #expect(await wait(.seconds(1)) { second.pings.events.map(\.n) == [5] })
        #expect(first.issues.events.filter { if case .standingBy = $0 { false } else { true } }.isEmpty)
        #expect(second.gapReports.isEmpty && second.redelivered == 0, "\(second.issues.events)")
        await second.stop()
    }

    @Test(
        "stress: 8 publishers × 500 events, three consumers (one restarted 4 times, one read by two bridges handing over 4 times), a cleanup loop: each event once per consumer, in order per origin"
    )
    func stress() async throws {
        let store = InMemoryDurableStore()
        let reading = DurableReading(batchSize: 100, leaseDuration: .seconds(1), pollInterval: .milliseconds(100))
        let publishers = (0..<8).map { ComboNode(store, consumer: "shop-\($0)") }
        let steady = ComboNode(store, consumer: "steady", reading: reading)
        let restarted = ComboNode(store, consumer: "restarted", reading: reading)
        let shared = (0..<2).map { _ in ComboNode(store, consumer: "shared", reading: reading) }
        await steady.start()
        await restarted.start()
        for bridge in shared { await bridge.start() }  // the second stands by
        #expect(await wait(.seconds(1)) { shared[1].standingBy == 1 })
        let started = ContinuousClock.now
        let cleaning = Task {
            var deleted = 0
            while !Task.isCancelled {
                deleted += (try? await store.cleanUp(DurableRetention())) ?? 0
                try? await Task.sleep(for: .milliseconds(5))
            }
            return deleted
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, publisher) in publishers.enumerated() {
                group.addTask {
                    for n in 1...500 {
                        try await publisher.bridge.publish(Ping(from: "\(index)", n: n))
                        if n % 10 == 0 { try await Task.sleep(for: .milliseconds(12)) }  // ~0.6 s in all
                    }
                }
            }
            for turn in 0..<4 {
                try await Task.sleep(for: .milliseconds(40))
                await restarted.stop()
                let other = shared[1 - turn % 2]
                let before = other.pings.events.count
                await shared[turn % 2].stop()  // the other takes over
                try await Task.sleep(for: .milliseconds(10))
                await restarted.start()
                #expect(await wait(.milliseconds(500)) { other.pings.events.count > before }, "no takeover")
                await shared[turn % 2].start()  // and stands by
            }
            try await group.waitForAll()
        }
        for consumer in [steady, restarted] {
            #expect(await wait(.seconds(2)) { consumer.pings.events.count >= 4_000 })
        }
        #expect(await wait(.seconds(2)) { shared.map(\.pings.events.count).reduce(0, +) >= 4_000 })
        let elapsed = ContinuousClock.now - started
        cleaning.cancel()
        let deleted = await cleaning.value
        try await Task.sleep(for: .milliseconds(50))
        for consumer in [steady, restarted] {
            let pings = consumer.pings.events
            #expect(pings.count == 4_000, "\(pings.count) delivered")
            for origin in 0..<8 {
                #expect(pings.filter { $0.from == "\(origin)" }.map(\.n) == Array(1...500), "origin \(origin)")
            }
            #expect(consumer.issues.events.isEmpty, "\(consumer.issues.events.prefix(3))")
        }
        let sharedPings = shared.flatMap(\.pings.events)
        for origin in 0..<8 {
            let numbers = sharedPings.filter { $0.from == "\(origin)" }.map(\.n)
            #expect(numbers.sorted() == Array(1...500), "shared, origin \(origin): each once")
            for bridge in shared {
                #expect(increasing(bridge.pings.events.filter { $0.from == "\(origin)" }.map(\.n)))
            }
        }
        for bridge in shared {
            let issues = bridge.issues.events.filter { if case .standingBy = $0 { false } else { true } }
            #expect(issues.isEmpty, "\(issues.prefix(3))")
        }
        let handovers = shared.map(\.standingBy).reduce(0, +)
        print(
            "durable stress: 8 × 500 events, 3 consumers, 4 restarts, \(handovers) stand-bys in \(elapsed): \(steady.pings.events.count) + \(restarted.pings.events.count) + \(shared[0].pings.events.count)/\(shared[1].pings.events.count) delivered, \(restarted.statuses.events.count) statuses, \(deleted) deleted by the cleanup loop, \(store.count) kept"
        )
        for consumer in [steady, restarted] + shared { await consumer.stop() }
    }
}

/// Ping's shape as version 1 of "test.ping".
struct ComboPingV1: Codable {
    let from: String
    let n: Int
}
