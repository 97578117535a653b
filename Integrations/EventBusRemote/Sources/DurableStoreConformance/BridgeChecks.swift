internal import EventBus
internal import EventBusRemote
internal import Foundation

/// The checks of bridges over ``DurableTransport`` on the store: what a ``DurableReader`` makes of it.
struct BridgeChecks<Store: DurableStore> {
    let store: Store

    /// Short leases and a short poll: a store that cannot wake its readers is read every 50 ms.
    static var reading: DurableReading {
        DurableReading(batchSize: 4, leaseDuration: .seconds(1), pollInterval: .milliseconds(50))
    }

    /// A bridge of `consumer` on the store, with the check's event registered.
    func bridge(_ consumer: String) -> Member {
        Member(
            transport: DurableTransport(store: store, consumer: DurableConsumerID(consumer), reading: Self.reading))
    }

    func missesNothing() async throws {
        let shop = bridge("shop")
        let mailer = bridge("mailer")
        try await mailer.start()
        for n in 1...5 { try await shop.bridge.publish(ConformanceEvent(n: n)) }
        try expect(await eventually { mailer.received.values.count >= 5 }, "received \(mailer.received.values)")
        try await mailer.stop()
        for n in 6...10 { try await shop.bridge.publish(ConformanceEvent(n: n)) }
        try await mailer.start()
        try expect(await eventually { mailer.received.values.count >= 10 }, "received \(mailer.received.values)")
        try await Task.sleep(for: .milliseconds(100))  // room for a second delivery
        try await mailer.stop()
        let numbers = mailer.received.values.map(\.n)
        try expect(numbers == Array(1...10), "received \(numbers), not 1...10 once each in order")
        let issues = mailer.issues.values.filter { !Member.isStandingBy($0) }
        try expect(issues.isEmpty, "issues: \(issues)")
    }

    func standsBy() async throws {
        let shop = bridge("shop")
        let members = [bridge("mailer"), bridge("mailer")]
        for member in members { try await member.start() }
        try expect(
            await eventually { members.contains { $0.issues.values.contains(where: Member.isStandingBy) } },
            "neither bridge of the consumer reports standing by")
        for n in 1...12 { try await shop.bridge.publish(ConformanceEvent(n: n)) }
        func total() -> Int { members.reduce(0) { $0 + $1.received.values.count } }
        try expect(await eventually { total() >= 12 }, "received \(total()) of 12")
        try await Task.sleep(for: .milliseconds(100))  // room for a second delivery
        let counts = members.map(\.received.values.count)
        try expect(counts.sorted() == [0, 12], "each event once, by the holder alone: \(counts)")
        let (holder, standby) = counts[0] == 12 ? (members[0], members[1]) : (members[1], members[0])
        try expect(
            standby.issues.values.filter(Member.isStandingBy).count == 1, "the standby reported standing by once")
        try await holder.stop()
        for n in 13...20 { try await shop.bridge.publish(ConformanceEvent(n: n)) }
        try expect(
            await eventually(within: .seconds(2)) { standby.received.values.count >= 8 },
            "the standby received \(standby.received.values.map(\.n)) of 13...20 within 2 s of the hand-over")
        try await Task.sleep(for: .milliseconds(100))
        try await standby.stop()
        let all = holder.received.values.map(\.n) + standby.received.values.map(\.n)
        try expect(all == Array(1...20), "across the hand-over: \(all)")
        let redelivered = standby.issues.values.filter { if case .redelivered = $0 { true } else { false } }
        try expect(redelivered.isEmpty, "a clean hand-over redelivered: \(redelivered)")
    }
}

/// The event the bridge checks exchange.
struct ConformanceEvent: Event, Codable, Equatable {
    let n: Int
}

/// One bridge of a check: its bus, what it received and reported, its receiving task.
final class Member: Sendable {
    let bus = EventBus()
    let bridge: RemoteBridge
    let received: Recording<ConformanceEvent>
    let issues: Recording<BridgeIssue>
    let statuses: Recording<BridgeStatus>
    private let task = Recording<Task<Void, any Error>>()

    init<Store: DurableStore>(transport: DurableTransport<Store>) {
        bridge = RemoteBridge(bus: bus, transport: transport)
        bridge.register(ConformanceEvent.self, as: "conformance.event")
        received = Recording(on: bus)
        issues = Recording(on: bus)
        statuses = Recording(on: bus)
    }

    deinit {
        for task in task.values { task.cancel() }
    }

    static func isStandingBy(_ issue: BridgeIssue) -> Bool {
        if case .standingBy = issue { true } else { false }
    }

    /// Runs the bridge and waits until it listens (2 s at most).
    func start(file: StaticString = #fileID, line: UInt = #line) async throws {
        let listened = statuses.values.count { if case .listening = $0 { true } else { false } }
        let bridge = self.bridge
        task.append(Task { try await bridge.run() })
        let listening = await eventually(within: .seconds(2)) {
            statuses.values.count { if case .listening = $0 { true } else { false } } > listened
        }
        try expect(listening, "the bridge did not start listening", file: file, line: line)
    }

    /// Stops the bridge and waits until its run has returned (2 s at most).
    func stop(file: StaticString = #fileID, line: UInt = #line) async throws {
        guard let running = task.values.last else { return }
        running.cancel()
        let ended = Recording<Bool>()
        Task {
            _ = await running.result
            ended.append(true)
        }
        let stopped = await eventually(within: .seconds(2)) { !ended.values.isEmpty }
        try expect(stopped, "the bridge did not stop within 2 s", file: file, line: line)
    }
}

/// Values appended from any thread (a bus's queue), read from another.
final class Recording<Value: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `stored` and `token` are only read or written while `lock` is held.
    private let lock = NSLock()
    private var stored: [Value] = []
    private var token: EventToken?

    init() {}

    deinit { token?.dispose() }

    var values: [Value] { lock.withLock { stored } }

    func append(_ value: Value) {
        lock.withLock { stored.append(value) }
    }
}

extension Recording where Value: Event {
    /// Records every `Value` dispatched on `bus`.
    convenience init(on bus: EventBus) {
        self.init()
        let token = bus.on(Value.self).next { [weak self] value in self?.append(value) }
        lock.withLock { self.token = token }
    }
}
