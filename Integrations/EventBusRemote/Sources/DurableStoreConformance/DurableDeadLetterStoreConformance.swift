public import EventBusRemote
internal import Foundation

/// The checks every ``DurableDeadLetterStore`` must pass (besides ``DurableStoreConformance``'s):
/// dead letters set aside and listed back as they were, selected by consumer (a group's partitions
/// included) and paged, requeued once each.
///
/// Each check makes a fresh store with `makeStore` (an empty channel, no dead letters), sets aside
/// events the store itself returned (appended, then claimed and read by a cursor) and throws a
/// ``ConformanceFailure`` (naming the failing expectation's file and line) when the store
/// misbehaves. None waits for a clock: each takes milliseconds (PostgreSQL: a few statements).
/// Runs on the calling task.
///
/// ```swift
/// @Test(arguments: DurableDeadLetterStoreConformance<InMemoryDurableStore>.checks)
/// func deadLetters(_ check: String) async throws {
///     try await DurableDeadLetterStoreConformance { InMemoryDurableStore() }.run(check)
/// }
/// ```
public struct DurableDeadLetterStoreConformance<Store: DurableDeadLetterStore>: Sendable {
    /// Makes a fresh store: an empty channel, no dead letters.
    public let makeStore: @Sendable () async throws -> Store

    /// A suite over the stores `makeStore` makes (one per check).
    ///
    /// ```swift
    /// let suite = DurableDeadLetterStoreConformance { InMemoryDurableStore() }
    /// ```
    public init(makeStore: @escaping @Sendable () async throws -> Store) {
        self.makeStore = makeStore
    }

    /// The names of the checks, in a fixed order: what ``run(_:)`` takes.
    ///
    /// ```swift
    /// for check in DurableDeadLetterStoreConformance<InMemoryDurableStore>.checks { print(check) }
    /// ```
    public static var checks: [String] { Check.allCases.map(\.rawValue) }

    /// What check `name` verifies, in a sentence (`nil` for an unknown name).
    ///
    /// ```swift
    /// print(DurableDeadLetterStoreConformance<InMemoryDurableStore>.summary(of: "requeueByID") ?? "")
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
    /// try await DurableDeadLetterStoreConformance { InMemoryDurableStore() }.run("listsBackAsSetAside")
    /// ```
    public func run(_ name: String) async throws {
        try await runCheck(name, of: Check.self, suite: "DurableDeadLetterStoreConformance") { check in
            var checks = DeadLetterChecks(store: try await makeStore())
            switch check {
            case .listsBackAsSetAside: try await checks.listsBackAsSetAside()
            case .selectsByConsumer: try await checks.selectsByConsumer()
            case .pagesAfterID: try await checks.pagesAfterID()
            case .limitBelowOneListsNone: try await checks.limitBelowOneListsNone()
            case .requeueByID: try await checks.requeueByID()
            case .requeueByConsumer: try await checks.requeueByConsumer()
            case .requeueEveryOne: try await checks.requeueEveryOne()
            }
        }
    }

    enum Check: String, CaseIterable {
        case listsBackAsSetAside
        case selectsByConsumer
        case pagesAfterID
        case limitBelowOneListsNone
        case requeueByID
        case requeueByConsumer
        case requeueEveryOne

        var summary: String {
            switch self {
            case .listsBackAsSetAside:
                "ids grow; a letter lists back as set aside (consumer, event id, wire name, envelope, attempts, reason), not requeued"
            case .selectsByConsumer:
                "listing a consumer includes its group's partitions (name#n), not name2 or another; nil lists all"
            case .pagesAfterID: "listing after an id pages through the letters, oldest first, at most the limit"
            case .limitBelowOneListsNone: "a limit of 0 or below lists nothing"
            case .requeueByID:
                "a requeue by id marks that letter once (1, then 0) and sets requeuedAt; an unknown id, or another consumer's, marks none"
            case .requeueByConsumer:
                "a requeue of a consumer marks its and its partitions' unmarked letters, counting only those"
            case .requeueEveryOne: "a requeue with neither id nor consumer marks every unmarked letter"
            }
        }
    }
}

/// The checks of a dead letter store.
struct DeadLetterChecks<Store: DurableDeadLetterStore> {
    typealias Position = Store.Position
    let store: Store
    var envelopes = ConformanceEnvelopes()

    init(store: Store) {
        self.store = store
    }

    /// The wire name every letter is set aside with.
    static var wireName: String { "conformance.event" }

    /// How far a letter's dates may be from this process's clock (PostgreSQL dates them by the
    /// server's): a sanity bound, not a measure.
    static var skew: TimeInterval { 300 }

    /// `count` events appended now, as the store returns them: claimed and read by a cursor opened
    /// before the append.
    mutating func events(_ count: Int) async throws -> [DurableEvent<Position>] {
        let base = StoreChecks(store: store)
        let (cursor, start) = try await base.opened(DurableConsumerID("dead-letter-reader-\(UUID())"))
        let epoch = try await base.leased(cursor)
        try await store.append(envelopes.next(count))
        let events = try await base.claimAndRead(cursor, after: start.position, epoch: epoch, expecting: count).events
        try expect(events.count == count, "the cursor read \(events.count) events of the \(count) appended")
        return events
    }

    /// Sets each of `events` aside for `consumer` (attempts 1, 2, 3…; reason `"<consumer> <n>"`),
    /// in order; returns the ids, which must grow.
    func setAside(_ events: [DurableEvent<Position>], of consumer: String) async throws -> [Int64] {
        var ids: [Int64] = []
        for (number, event) in events.enumerated() {
            let id = try await store.deadLetter(
                event, of: consumer, wireName: Self.wireName, attempts: number + 1, reason: "\(consumer) \(number)")
            try expect(ids.last.map { $0 < id } ?? true, "dead letter id \(id) follows \(ids.last ?? 0)")
            ids.append(id)
        }
        return ids
    }

    /// Every letter of `consumer` (`nil`: every one).
    func listed(_ consumer: String?) async throws -> [DurableDeadLetter] {
        try await store.deadLetters(of: consumer, after: 0, limit: 1_000)
    }

    /// Fails unless `date` is this process's now, give or take ``skew``.
    func expectNow(_ date: Date?, _ what: String, file: StaticString = #fileID, line: UInt = #line) throws {
        let date = try require(date, "\(what) is nil", file: file, line: line)
        try expect(
            abs(date.timeIntervalSinceNow) < Self.skew, "\(what) is \(date), not now (\(Date()))", file: file,
            line: line)
    }

    mutating func listsBackAsSetAside() async throws {
        try expect(try await listed(nil).isEmpty, "a fresh store lists dead letters")
        let events = try await events(3)
        let ids = try await setAside(events, of: "billing")
        // The same event set aside for another consumer: another letter, the same event id.
        let again = try await store.deadLetter(
            events[1], of: "audit", wireName: Self.wireName, attempts: 7, reason: "again")
        try expect(again > ids[2], "dead letter id \(again) follows \(ids[2])")
        let letters = try await listed(nil)
        try expect(letters.map(\.id) == ids + [again], "listed ids \(letters.map(\.id)), set aside \(ids + [again])")
        for (number, (letter, event)) in zip(letters, events).enumerated() {
            try expect(
                letter.consumer == "billing" && letter.wireName == Self.wireName && letter.envelope == event.envelope
                    && letter.attempts == number + 1 && letter.reason == "billing \(number)"
                    && letter.requeuedAt == nil,
                "letter \(number) lists back as \(letter), not as set aside")
            try expectNow(letter.deadAt, "letter \(number)'s deadAt")
        }
        // Event ids follow the store's positions: one per event, in the events' order.
        let eventIDs = letters.prefix(3).map(\.eventID)
        try expect(
            zip(eventIDs, eventIDs.dropFirst()).allSatisfy { $0 < $1 },
            "event ids \(eventIDs) of events at \(events.map(\.position)) do not grow with their positions")
        let last = try require(letters.last, "no letter for audit")
        try expect(
            last.consumer == "audit" && last.eventID == eventIDs[1] && last.envelope == events[1].envelope
                && last.attempts == 7 && last.reason == "again",
            "the second letter of one event lists back as \(last)")
    }

    mutating func selectsByConsumer() async throws {
        let events = try await events(6)
        let names = ["billing", "billing#0", "billing#12", "billing2", "other", "other#billing"]
        var ids: [String: Int64] = [:]
        for (name, event) in zip(names, events) {
            ids[name] = try await setAside([event], of: name).first
        }
        let billing = try await listed("billing")
        let expected = ["billing", "billing#0", "billing#12"]
        try expect(
            billing.map(\.consumer) == expected && billing.map(\.id) == expected.compactMap { ids[$0] },
            "billing lists \(billing.map(\.consumer)), not \(expected)")
        let partition = try await listed("billing#0")
        try expect(partition.map(\.consumer) == ["billing#0"], "billing#0 lists \(partition.map(\.consumer))")
        let other = try await listed("other")
        try expect(
            other.map(\.consumer) == ["other", "other#billing"], "other lists \(other.map(\.consumer))")
        try expect(try await listed("bill").isEmpty, "a prefix of a name that is not a group lists letters")
        try expect(try await listed("nobody").isEmpty, "an unknown consumer lists letters")
        let all = try await listed(nil)
        try expect(all.map(\.consumer) == names, "nil lists \(all.map(\.consumer)), not \(names)")
    }

    mutating func pagesAfterID() async throws {
        let events = try await events(6)
        let ids = try await setAside(Array(events.prefix(5)), of: "billing#1")
        _ = try await setAside([events[5]], of: "other")
        var pages: [[Int64]] = []
        var after: Int64 = 0
        while pages.count < 10 {
            let page = try await store.deadLetters(of: "billing", after: after, limit: 2).map(\.id)
            if page.isEmpty { break }
            pages.append(page)
            after = page[page.count - 1]
        }
        let expected = [Array(ids[0..<2]), Array(ids[2..<4]), [ids[4]]]
        try expect(pages == expected, "pages of 2 are \(pages), not \(expected)")
        let tail = try await store.deadLetters(of: nil, after: ids[3], limit: 10)
        try expect(tail.count == 2 && tail.first?.id == ids[4], "after \(ids[3]): \(tail.map(\.id))")
        try expect(
            try await store.deadLetters(of: nil, after: tail[1].id, limit: 10).isEmpty, "letters after the last")
    }

    mutating func limitBelowOneListsNone() async throws {
        _ = try await setAside(try await events(2), of: "billing")
        for limit in [0, -1, Int.min] {
            let letters = try await store.deadLetters(of: nil, after: 0, limit: limit)
            try expect(letters.isEmpty, "a limit of \(limit) lists \(letters.count) letters")
        }
        try expect(try await store.deadLetters(of: "billing", after: 0, limit: 1).count == 1, "a limit of 1")
    }

    mutating func requeueByID() async throws {
        let ids = try await setAside(try await events(3), of: "billing#2")
        try expect(try await store.requeueDeadLetters(ids[1], of: nil) == 1, "a requeue by id did not mark 1")
        try expect(try await store.requeueDeadLetters(ids[1], of: nil) == 0, "a repeated requeue marked again")
        try expect(try await store.requeueDeadLetters(ids[0], of: "other") == 0, "another consumer's id was marked")
        try expect(try await store.requeueDeadLetters(ids[2] + 1_000, of: nil) == 0, "an unknown id was marked")
        let letters = try await listed(nil)
        try expect(letters.map(\.id) == ids, "a requeue changed the list: \(letters.map(\.id))")
        try expect(letters[0].requeuedAt == nil && letters[2].requeuedAt == nil, "a letter not requeued is marked")
        try expectNow(letters[1].requeuedAt, "the requeued letter's requeuedAt")
        try expect(
            letters[1].attempts == 2 && letters[1].reason == "billing#2 1" && letters[1].consumer == "billing#2",
            "a requeue changed the letter: \(letters[1])")
        try expect(try await store.requeueDeadLetters(ids[0], of: "billing") == 1, "a partition's id by its group")
    }

    mutating func requeueByConsumer() async throws {
        let events = try await events(5)
        let billing = try await setAside(Array(events[0..<2]), of: "billing")
        let partition = try await setAside([events[2]], of: "billing#3")
        _ = try await setAside([events[3]], of: "billing2")
        _ = try await setAside([events[4]], of: "other")
        try expect(try await store.requeueDeadLetters(billing[0], of: nil) == 1, "a requeue by id")
        let marked = try await store.requeueDeadLetters(nil, of: "billing")
        try expect(marked == 2, "billing's requeue marked \(marked), not its 2 unmarked letters (its own, billing#3's)")
        try expect(try await store.requeueDeadLetters(nil, of: "billing") == 0, "a repeated requeue marked again")
        let letters = try await listed(nil)
        let requeued = letters.filter { $0.requeuedAt != nil }.map(\.id)
        try expect(requeued == billing + partition, "requeued \(requeued), not \(billing + partition)")
        for letter in letters where letter.requeuedAt != nil { try expectNow(letter.requeuedAt, "\(letter.id)") }
    }

    mutating func requeueEveryOne() async throws {
        let events = try await events(4)
        let ids = try await setAside(Array(events[0..<2]), of: "billing#0")
        _ = try await setAside(Array(events[2..<4]), of: "other")
        try expect(try await store.requeueDeadLetters(ids[0], of: nil) == 1, "a requeue by id")
        let marked = try await store.requeueDeadLetters(nil, of: nil)
        try expect(marked == 3, "a requeue of every letter marked \(marked), not the 3 unmarked")
        try expect(try await store.requeueDeadLetters(nil, of: nil) == 0, "a repeated requeue marked again")
        let letters = try await listed(nil)
        try expect(letters.count == 4 && letters.allSatisfy { $0.requeuedAt != nil }, "not every letter is requeued")
    }
}
