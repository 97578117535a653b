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
        #expect(await wait(.seconds(2)) { self.statuses.events.count(where: Self.isListening) > before }, "not listening")
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
        "a holder killed mid-batch, then retention of 0: its claimed batch is kept and announced redelivered, the rest expired, no gap reported"
    )
    func killedMidBatchRetention() async throws {
        let store = InMemoryDurableStore()
        let shop = ComboNode(store, consumer: "shop")
        let dead = store.cursor(DurableConsumerID("mailer"), owner: UUID())
        let start = try await dead.open()
        let epoch = try #require(try await dead.takeLease(for: .milliseconds(100)))
        for n in 1...8 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
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
}
