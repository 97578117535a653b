public import EventBusRemote
internal import Foundation

/// The checks every ``DurableScheduleStore`` must pass (besides ``DurableStoreConformance``'s):
/// scheduled events fired when due and not before, in due order, at most a limit per pass, once
/// however many passes run at once; cancels that say who won; refusals.
///
/// Each check makes a fresh store with `makeStore` (an empty channel, no scheduled events), and
/// throws a ``ConformanceFailure`` (naming the failing expectation's file and line) when the store
/// misbehaves. The checks seal with a stand-in (no bridge): the envelope appended is a text that
/// names the event. Each takes a second or so at most. Runs on the calling task.
///
/// ```swift
/// @Test(arguments: DurableScheduleStoreConformance<InMemoryDurableStore>.checks)
/// func scheduling(_ check: String) async throws {
///     try await DurableScheduleStoreConformance { InMemoryDurableStore() }.run(check)
/// }
/// ```
public struct DurableScheduleStoreConformance<Store: DurableScheduleStore>: Sendable {
    /// Makes a fresh store: an empty channel, nothing scheduled.
    public let makeStore: @Sendable () async throws -> Store

    /// A suite over the stores `makeStore` makes (one per check).
    ///
    /// ```swift
    /// let suite = DurableScheduleStoreConformance { InMemoryDurableStore() }
    /// ```
    public init(makeStore: @escaping @Sendable () async throws -> Store) {
        self.makeStore = makeStore
    }

    /// The names of the checks, in a fixed order: what ``run(_:)`` takes.
    ///
    /// ```swift
    /// for check in DurableScheduleStoreConformance<InMemoryDurableStore>.checks { print(check) }
    /// ```
    public static var checks: [String] { Check.allCases.map(\.rawValue) }

    /// What check `name` verifies, in a sentence (`nil` for an unknown name).
    ///
    /// ```swift
    /// print(DurableScheduleStoreConformance<InMemoryDurableStore>.summary(of: "firesWhenDue") ?? "")
    /// ```
    public static func summary(of name: String) -> String? {
        Check(rawValue: name)?.summary
    }

    /// Runs check `name` (one of ``checks``) on a fresh store.
    ///
    /// - Throws: A ``ConformanceFailure`` when the store misbehaves (or `name` is not a check);
    ///   what the store throws where it should not.
    ///
    /// ```swift
    /// try await DurableScheduleStoreConformance { InMemoryDurableStore() }.run("cancelSaysWhoWon")
    /// ```
    public func run(_ name: String) async throws {
        try await runCheck(name, of: Check.self, suite: "DurableScheduleStoreConformance") { check in
            let checks = ScheduleChecks(store: try await makeStore())
            switch check {
            case .firesWhenDue: try await checks.firesWhenDue()
            case .dueOrderAndLimit: try await checks.dueOrderAndLimit()
            case .cancelSaysWhoWon: try await checks.cancelSaysWhoWon()
            case .refusedNeverFires: try await checks.refusedNeverFires()
            case .concurrentPassesFireOnce: try await checks.concurrentPassesFireOnce()
            }
        }
    }

    enum Check: String, CaseIterable {
        case firesWhenDue
        case dueOrderAndLimit
        case cancelSaysWhoWon
        case refusedNeverFires
        case concurrentPassesFireOnce

        var summary: String {
            switch self {
            case .firesWhenDue: "an event fires when due (after a delay, at a date, looking ahead), not before"
            case .dueOrderAndLimit: "a pass takes at most its limit, the earliest due first, appended in due order"
            case .cancelSaysWhoWon: "a cancel of a pending event wins; later cancels say it fired or was cancelled"
            case .refusedNeverFires: "an event the seal refuses is taken, never appended, and a cancel says why"
            case .concurrentPassesFireOnce: "passes running at once fire each due event exactly once"
            }
        }
    }
}

/// The checks of a schedule store.
struct ScheduleChecks<Store: DurableScheduleStore> {
    let store: Store

    /// A scheduled event whose payload names it.
    static func pending(_ name: String) -> RemoteBridge.PendingEvent {
        RemoteBridge.PendingEvent(
            wireName: "conformance.event", keyJSON: nil, contextJSON: nil, payload: #"{"name":"\#(name)"}"#, mac: nil)
    }

    /// The stand-in seal: the appended text names the event.
    static var seal: @Sendable (DurableDueEvent) throws -> String { { due in "fired " + due.pending.payload } }

    /// The texts appended to the store since `cursor` was opened at `start`.
    func appended(_ cursor: Store.Cursor, after start: Store.Position, epoch: Int64) async throws -> [String] {
        guard let claim = try await cursor.claim(after: start, limit: 1_000, epoch: epoch) else { return [] }
        return try await cursor.read(after: start, through: claim.last, limit: 1_000).map(\.envelope)
    }

    /// A plain cursor opened now, with its lease.
    func reader() async throws -> (Store.Cursor, Store.Position, Int64) {
        let cursor = store.cursor(DurableConsumerID("reader"), owner: UUID())
        let start = try await cursor.open().position
        let epoch = try require(try await cursor.takeLease(for: .seconds(30)), "the reader's lease was not free")
        return (cursor, start, epoch)
    }

    /// Fires until a pass takes nothing; how many it took in all.
    func fireAll(lookingAhead: Duration = .zero) async throws -> Int {
        var total = 0
        while true {
            let taken = try await store.fireDue(lookingAhead: lookingAhead, limit: 100, seal: Self.seal)
            total += taken
            if taken == 0 { return total }
        }
    }

    func firesWhenDue() async throws {
        let (cursor, start, epoch) = try await reader()
        try await store.schedule(Self.pending("now"), id: UUID(), due: .after(.zero))
        try await store.schedule(Self.pending("soon"), id: UUID(), due: .after(.milliseconds(600)))
        try await store.schedule(Self.pending("later"), id: UUID(), due: .at(Date().addingTimeInterval(60)))
        try expect(try await fireAll() == 1, "a pass fired other than the one event due now")
        var soon = 0
        let deadline = ContinuousClock.now + .seconds(3)
        while soon == 0, ContinuousClock.now < deadline {
            soon = try await store.fireDue(lookingAhead: .zero, limit: 10, seal: Self.seal)
            if soon == 0 { try await Task.sleep(for: .milliseconds(20)) }
        }
        try expect(soon == 1, "the event due in 600 ms fired \(soon) times within 3 s")
        try expect(try await fireAll() == 0, "an event due in a minute fired")
        try expect(try await fireAll(lookingAhead: .seconds(120)) == 1, "looking ahead 2 minutes fired nothing")
        let texts = try await appended(cursor, after: start, epoch: epoch)
        let expected = ["now", "soon", "later"].map { "fired " + Self.pending($0).payload }
        try expect(texts == expected, "appended \(texts), not \(expected)")
    }

    func dueOrderAndLimit() async throws {
        let (cursor, start, epoch) = try await reader()
        let now = Date()
        for (name, secondsAgo) in [("c", 10.0), ("a", 30.0), ("e", 1.0), ("b", 20.0), ("d", 5.0)] {
            try await store.schedule(Self.pending(name), id: UUID(), due: .at(now.addingTimeInterval(-secondsAgo)))
        }
        let first = try await store.fireDue(lookingAhead: .zero, limit: 2, seal: Self.seal)
        try expect(first == 2, "a pass of limit 2 took \(first)")
        try expect(
            try await appended(cursor, after: start, epoch: epoch)
                == ["a", "b"].map { "fired " + Self.pending($0).payload },
            "the first pass did not fire the two earliest")
        try expect(try await store.fireDue(lookingAhead: .zero, limit: 10, seal: Self.seal) == 3, "the rest")
        let texts = try await appended(cursor, after: start, epoch: epoch)
        let expected = ["a", "b", "c", "d", "e"].map { "fired " + Self.pending($0).payload }
        try expect(texts == expected, "appended \(texts), not in due order \(expected)")
    }

    func cancelSaysWhoWon() async throws {
        let (cursor, start, epoch) = try await reader()
        let (kept, dropped) = (UUID(), UUID())
        try await store.schedule(Self.pending("kept"), id: kept, due: .after(.zero))
        try await store.schedule(Self.pending("dropped"), id: dropped, due: .after(.zero))
        try expect(try await store.cancelScheduled(dropped) == .cancelled, "a pending event's cancel lost")
        try expect(try await store.cancelScheduled(dropped) == .alreadyCancelled, "a second cancel won")
        try expect(try await fireAll() == 1, "a cancelled event was taken")
        try expect(try await store.cancelScheduled(kept) == .alreadyFired, "a fired event's cancel won")
        try expect(try await store.cancelScheduled(UUID()) == .unknown, "an unknown id was found")
        let texts = try await appended(cursor, after: start, epoch: epoch)
        try expect(texts == ["fired " + Self.pending("kept").payload], "appended \(texts)")
    }

    func refusedNeverFires() async throws {
        let (cursor, start, epoch) = try await reader()
        let (good, bad) = (UUID(), UUID())
        try await store.schedule(Self.pending("good"), id: good, due: .after(.zero))
        try await store.schedule(Self.pending("bad"), id: bad, due: .after(.zero))
        let taken = try await store.fireDue(lookingAhead: .zero, limit: 10) { due in
            guard due.id != bad else { throw ConformanceRefusal() }
            return try Self.seal(due)
        }
        try expect(taken == 2, "the pass took \(taken), not both events")
        try expect(try await fireAll() == 0, "a refused event was taken again")
        let texts = try await appended(cursor, after: start, epoch: epoch)
        try expect(texts == ["fired " + Self.pending("good").payload], "appended \(texts)")
        let cancel = try await store.cancelScheduled(bad)
        guard case .refused(let reason) = cancel else {
            throw ConformanceFailure(
                check: "", message: "a refused event's cancel says \(cancel)", file: #fileID, line: #line)
        }
        try expect(reason.contains(ConformanceRefusal.text), "the refusal's reason is \(reason)")
    }

    func concurrentPassesFireOnce() async throws {
        let (cursor, start, epoch) = try await reader()
        let names = (1...40).map { "event-\($0)" }
        for name in names { try await store.schedule(Self.pending(name), id: UUID(), due: .after(.zero)) }
        let store = self.store
        let taken = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var total = 0
                    while true {
                        let taken = try await store.fireDue(lookingAhead: .zero, limit: 3, seal: Self.seal)
                        total += taken
                        if taken == 0 { return total }
                    }
                }
            }
            return try await group.reduce(0, +)
        }
        try expect(taken == 40, "four passes at once took \(taken) of 40")
        let texts = try await appended(cursor, after: start, epoch: epoch)
        try expect(
            texts.count == 40 && Set(texts).count == 40, "appended \(texts.count) texts, \(Set(texts).count) distinct")
    }
}

/// The stand-in seal's refusal.
struct ConformanceRefusal: Error, CustomStringConvertible {
    static let text = "refused by the conformance seal"
    var description: String { Self.text }
}
