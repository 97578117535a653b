internal import EventBusRemote
internal import Foundation

/// The checks of a store's own operations (cursors, leases, claims, acknowledgements, cleanup).
struct StoreChecks<Store: DurableStore> {
    typealias Position = Store.Position
    let store: Store
    var envelopes = ConformanceEnvelopes()

    init(store: Store) {
        self.store = store
    }

    /// A long lease: no check waits for it to lapse.
    static var long: Duration { .seconds(30) }

    /// The cursor of `name` for a new owner, opened, and where it stood.
    func opened(_ consumer: DurableConsumerID, owner: UUID = UUID()) async throws -> (
        Store.Cursor, DurableCursorState<Position>
    ) {
        let cursor = store.cursor(consumer, owner: owner)
        return (cursor, try await cursor.open())
    }

    /// The cursor of plain consumer `name` for a new owner, opened.
    func opened(_ name: String) async throws -> (Store.Cursor, DurableCursorState<Position>) {
        try await opened(DurableConsumerID(name))
    }

    /// The lease of `cursor`, which must be free.
    func leased(
        _ cursor: Store.Cursor, for duration: Duration = long, file: StaticString = #fileID, line: UInt = #line
    ) async throws -> Int64 {
        try require(
            try await cursor.takeLease(for: duration), "the lease of \(cursor.id) was not free", file: file,
            line: line)
    }

    /// Claims after `position` and reads the claimed events, with `cursor` (whose lease `epoch`
    /// is). A store may make an appended event readable a little later (PostgreSQL: once no
    /// transaction that began before its append still runs), so the claim is tried again, for 5 s
    /// at most, until it holds `count` events (by default: until it holds anything, the horizon).
    func claimAndRead(
        _ cursor: Store.Cursor, after position: Position, limit: Int = 100, epoch: Int64, expecting count: Int = 0,
        file: StaticString = #fileID, line: UInt = #line
    ) async throws -> (claim: DurableClaim<Position>, events: [DurableEvent<Position>]) {
        let deadline = ContinuousClock.now + .seconds(5)
        var found = try await cursor.claim(after: position, limit: limit, epoch: epoch)
        while found.map({ $0.count < count }) ?? true, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
            found = try await cursor.claim(after: position, limit: limit, epoch: epoch)
        }
        let claim = try require(found, "\(cursor.id) claimed nothing after \(position)", file: file, line: line)
        let events = try await cursor.read(after: position, through: claim.last, limit: limit)
        return (claim, events)
    }

    /// Fails unless `cursor` has `count` expired events not yet reported.
    func expectExpired(
        _ cursor: Store.Cursor, _ count: Int, _ who: String, file: StaticString = #fileID, line: UInt = #line
    ) async throws {
        let expired = try await cursor.open().expired
        try expect(expired == count, "\(who) has \(expired) expired, not \(count)", file: file, line: line)
    }

    // MARK: Reading

    mutating func readsAfterCreation() async throws {
        // A cursor of an empty store reads everything appended after it is opened.
        let (first, empty) = try await opened("first")
        try expect(empty.claimed == nil && empty.expired == 0, "a new cursor has no claim and nothing expired")
        let firstEpoch = try await leased(first)
        let early = envelopes.next(3)
        try await store.append(early)
        let all = try await claimAndRead(first, after: empty.position, epoch: firstEpoch, expecting: 3)
        try expect(all.events.map(\.envelope) == early, "read \(all.events.map(\.envelope)), appended \(early)")
        // A cursor opened after events exist starts after them.
        let (late, start) = try await opened("late")
        let epoch = try await leased(late)
        try expect(
            try await late.claim(after: start.position, limit: 10, epoch: epoch) == nil,
            "a cursor opened after 3 events claimed some of them")
        let later = envelopes.next(4)
        try await store.append(Array(later[0..<2]))
        try await store.append(Array(later[2...]))
        let (claim, events) = try await claimAndRead(late, after: start.position, epoch: epoch, expecting: 4)
        try expect(claim.count == 4, "claimed \(claim.count) of the 4 events after the cursor")
        try expect(events.map(\.envelope) == later, "read \(events.map(\.envelope)), appended \(later)")
        try expect(
            zip(events, events.dropFirst()).allSatisfy { $0.position < $1.position },
            "positions do not increase: \(events.map(\.position))")
        try expect(events.last?.position == claim.last, "the claim's last \(claim.last) is not the last event read")
        try expect(
            events.first.map { $0.position > all.claim.last } ?? false, "the later events are not after the earlier")
        // Opening an existing cursor again changes nothing.
        let again = try await late.open()
        try expect(again.position == start.position, "opening again moved the cursor to \(again.position)")
        try expect(again.claimed == claim.last, "the claim is \(String(describing: again.claimed)), not \(claim.last)")
    }

    mutating func claimLimitAndCount() async throws {
        let (cursor, start) = try await opened("reader")
        let epoch = try await leased(cursor)
        let appended = envelopes.next(5)
        try await store.append(appended)
        let first = try await claimAndRead(cursor, after: start.position, limit: 2, epoch: epoch, expecting: 2)
        try expect(first.claim.count == 2, "a claim of limit 2 holds \(first.claim.count)")
        try expect(first.events.map(\.envelope) == Array(appended[0..<2]), "read \(first.events.map(\.envelope))")
        _ = try await cursor.acknowledge(first.claim.last, claim: .keep, epoch: epoch)
        let rest = try await claimAndRead(cursor, after: first.claim.last, limit: 10, epoch: epoch)
        try expect(rest.claim.count == 3, "the rest's claim holds \(rest.claim.count), not 3")
        try expect(rest.events.map(\.envelope) == Array(appended[2...]), "read \(rest.events.map(\.envelope))")
        let limited = try await cursor.read(after: start.position, through: rest.claim.last, limit: 2)
        try expect(limited.map(\.envelope) == Array(appended[0..<2]), "a read of limit 2 returned \(limited.count)")
        _ = try await cursor.acknowledge(rest.claim.last, claim: .keep, epoch: epoch)
        try expect(
            try await cursor.claim(after: rest.claim.last, limit: 10, epoch: epoch) == nil,
            "a claim after the last event claimed something")
    }

    mutating func claimOnlyMovesForward() async throws {
        let (cursor, start) = try await opened("reader")
        let epoch = try await leased(cursor)
        try await store.append(envelopes.next(3))
        let whole = try await claimAndRead(cursor, after: start.position, limit: 10, epoch: epoch, expecting: 3)
        let part = try await claimAndRead(cursor, after: start.position, limit: 1, epoch: epoch)
        try expect(part.claim.last < whole.claim.last, "a claim of 1 ended at \(part.claim.last)")
        let state = try await cursor.open()
        try expect(state.claimed == whole.claim.last, "a shorter claim moved the claim back to \(state.claimed as Any)")
    }

    mutating func claimFencedByEpoch() async throws {
        let owner = UUID()
        let (cursor, start) = try await opened(DurableConsumerID("reader"), owner: owner)
        let other = store.cursor(DurableConsumerID("reader"), owner: UUID())
        let epoch = try await leased(cursor)
        try await store.append(envelopes.next(2))
        try await expectLeaseLost(cursor, "a claim with the next epoch") {
            try await cursor.claim(after: start.position, limit: 10, epoch: epoch + 1)
        }
        try await expectLeaseLost(other, "a claim by another owner with the holder's epoch") {
            try await other.claim(after: start.position, limit: 10, epoch: epoch)
        }
        try await expectLeaseLost(cursor, "an acknowledgement with the previous epoch") {
            try await cursor.acknowledge(start.position, claim: .keep, epoch: epoch - 1)
        }
        var state = try await cursor.open()
        try expect(state.claimed == nil, "a fenced claim claimed through \(state.claimed as Any)")
        let (claim, _) = try await claimAndRead(cursor, after: start.position, epoch: epoch, expecting: 2)
        try await expectLeaseLost(other, "an acknowledgement by another owner with the holder's epoch") {
            try await other.acknowledge(claim.last, claim: .keep, epoch: epoch)
        }
        state = try await cursor.open()
        try expect(state.position == start.position, "a fenced acknowledgement moved the cursor")
        try expect(state.claimed == claim.last, "a fenced acknowledgement changed the claim")
        _ = try await cursor.acknowledge(claim.last, claim: .keep, epoch: epoch)
        state = try await cursor.open()
        try expect(state.position == claim.last, "the holder's acknowledgement did not move the cursor")
    }

    // MARK: Leases

    func leaseExclusive() async throws {
        let (holder, _) = try await opened(DurableConsumerID("shared"), owner: UUID())
        let (other, _) = try await opened(DurableConsumerID("shared"), owner: UUID())
        let first = try await leased(holder)
        try expect(try await other.takeLease(for: Self.long) == nil, "another owner took a held lease")
        let second = try require(try await holder.takeLease(for: Self.long), "the owner could not retake its lease")
        try expect(second == first + 1, "the owner retook its lease with epoch \(second), not \(first + 1)")
        try expect(try await holder.renewLease(second, for: Self.long), "the holder could not renew its lease")
        try expect(try await !holder.renewLease(first, for: Self.long), "a renewal with the previous epoch succeeded")
        try expect(try await !other.renewLease(second, for: Self.long), "another owner renewed the holder's lease")
        try await other.releaseLease(second)
        try await holder.releaseLease(first)
        try expect(
            try await other.takeLease(for: Self.long) == nil,
            "the lease was free after a release by another owner or with the previous epoch")
        try await holder.releaseLease(second)
        let third = try require(try await other.takeLease(for: Self.long), "a released lease was not free")
        try expect(third == second + 1, "a released lease was taken with epoch \(third), not \(second + 1)")
        try expect(try await holder.takeLease(for: Self.long) == nil, "the old owner took the new owner's lease")
        try await other.releaseLease(nil)
        let fourth = try require(try await holder.takeLease(for: Self.long), "a lease released (nil) was not free")
        try expect(fourth == third + 1, "epoch \(fourth) after \(third)")
    }

    mutating func leaseLapse() async throws {
        let (holder, start) = try await opened(DurableConsumerID("shared"), owner: UUID())
        let (other, _) = try await opened(DurableConsumerID("shared"), owner: UUID())
        let first = try await leased(holder, for: .milliseconds(400))
        try expect(try await other.takeLease(for: .milliseconds(400)) == nil, "another owner took a held lease")
        try await Task.sleep(for: .milliseconds(600))
        let second = try require(try await other.takeLease(for: Self.long), "a lapsed lease was not free")
        try expect(second == first + 1, "a lapsed lease was taken with epoch \(second), not \(first + 1)")
        try expect(try await !holder.renewLease(first, for: Self.long), "the lapsed owner renewed a taken lease")
        try expect(try await holder.takeLease(for: Self.long) == nil, "the lapsed owner took the lease back")
        try await store.append(envelopes.next(1))
        try await expectLeaseLost(holder, "a claim by the owner whose lease lapsed and was taken") {
            try await holder.claim(after: start.position, limit: 10, epoch: first)
        }
        try await expectLeaseLost(holder, "an acknowledgement by the owner whose lease was taken") {
            try await holder.acknowledge(start.position, claim: .keep, epoch: first)
        }
        let (claim, _) = try await claimAndRead(other, after: start.position, epoch: second, expecting: 1)
        try expect(claim.count == 1, "the new owner claimed \(claim.count)")
    }

    // MARK: Acknowledgements

    mutating func acknowledgeMovesCursor() async throws {
        let (cursor, start) = try await opened("reader")
        let epoch = try await leased(cursor)
        try await store.append(envelopes.next(3))
        let (claim, events) = try await claimAndRead(cursor, after: start.position, epoch: epoch, expecting: 3)
        var state = try await cursor.open()
        try expect(state.claimed == claim.last, "open() shows the claim as \(state.claimed as Any)")
        try expect(events.count == 3, "read \(events.count) of 3")
        let expired = try await cursor.acknowledge(events[1].position, claim: .keep, epoch: epoch)
        try expect(expired == 0, "an acknowledgement returned \(expired) expired, with no cleanup")
        state = try await cursor.open()
        try expect(state.position == events[1].position, "the cursor is at \(state.position)")
        try expect(state.claimed == claim.last, "an acknowledgement before the claim's end dropped it")
        _ = try await cursor.acknowledge(claim.last, claim: .keep, epoch: epoch)
        state = try await cursor.open()
        try expect(state.position == claim.last && state.claimed == nil, "after the last: \(state)")
        try expect(
            try await cursor.claim(after: claim.last, limit: 10, epoch: epoch) == nil, "claimed again after the last")
    }

    mutating func acknowledgeReleasesClaim() async throws {
        let (cursor, start) = try await opened("reader")
        let epoch = try await leased(cursor)
        try await store.append(envelopes.next(4))
        let (_, events) = try await claimAndRead(cursor, after: start.position, epoch: epoch, expecting: 4)
        try expect(events.count == 4, "read \(events.count) of 4")
        let at = events.map(\.position)
        _ = try await cursor.acknowledge(at[0], claim: .releaseTo(at[2]), epoch: epoch)
        var state = try await cursor.open()
        try expect(state.position == at[0] && state.claimed == at[2], "releaseTo beyond the cursor: \(state)")
        _ = try await cursor.acknowledge(at[2], claim: .releaseTo(at[1]), epoch: epoch)
        state = try await cursor.open()
        try expect(state.position == at[2] && state.claimed == nil, "releaseTo before the cursor: \(state)")
        _ = try await claimAndRead(cursor, after: at[2], epoch: epoch)
        _ = try await cursor.acknowledge(at[2], claim: .releaseTo(nil), epoch: epoch)
        state = try await cursor.open()
        try expect(state.position == at[2] && state.claimed == nil, "releaseTo(nil): \(state)")
    }

    mutating func claimSurvivesTakeover() async throws {
        let (holder, start) = try await opened(DurableConsumerID("shared"), owner: UUID())
        let first = try await leased(holder, for: .milliseconds(300))
        let appended = envelopes.next(3)
        try await store.append(appended)
        let (claim, _) = try await claimAndRead(holder, after: start.position, epoch: first, expecting: 3)
        // The holder dies here, its batch delivered perhaps, not acknowledged.
        let (successor, found) = try await opened(DurableConsumerID("shared"), owner: UUID())
        try expect(found.position == start.position, "the successor found the cursor at \(found.position)")
        try expect(found.claimed == claim.last, "the successor found the claim \(found.claimed as Any)")
        try await Task.sleep(for: .milliseconds(450))
        let second = try await leased(successor)
        let again = try await claimAndRead(successor, after: found.position, epoch: second)
        try expect(again.events.map(\.envelope) == appended, "the batch read again is \(again.events.count) events")
    }

    // MARK: Cleanup

    mutating func cleanUpWhatAllPassed() async throws {
        try await store.append(envelopes.next(2))
        try expect(try await store.cleanUp(DurableRetention()) == 0, "cleanUp without cursors deleted events")
        let (a, startA) = try await opened("a")
        let (b, startB) = try await opened("b")
        let (epochA, epochB) = (try await leased(a), try await leased(b))
        let appended = envelopes.next(4)
        try await store.append(appended)
        let before = try await store.cleanUp(DurableRetention())
        try expect(before == 2, "deleted \(before), not the 2 events before both cursors")
        try expect(try await store.cleanUp(DurableRetention()) == 0, "cleanUp deleted events no cursor passed")
        let readA = try await claimAndRead(a, after: startA.position, epoch: epochA, expecting: 4)
        _ = try await a.acknowledge(readA.claim.last, claim: .keep, epoch: epochA)
        let readB = try await claimAndRead(b, after: startB.position, limit: 2, epoch: epochB, expecting: 2)
        _ = try await b.acknowledge(readB.claim.last, claim: .keep, epoch: epochB)
        let deleted = try await store.cleanUp(DurableRetention())
        try expect(deleted == 2, "deleted \(deleted), not the 2 events both cursors passed")
        let rest = try await claimAndRead(b, after: readB.claim.last, epoch: epochB)
        try expect(rest.events.map(\.envelope) == Array(appended[2...]), "b's unread events were deleted")
        _ = try await b.acknowledge(rest.claim.last, claim: .keep, epoch: epochB)
        try expect(try await store.cleanUp(DurableRetention()) == 2, "the events both passed were not deleted")
        let expired = (try await a.open().expired, try await b.open().expired)
        try expect(expired == (0, 0), "events both cursors passed counted as expired: \(expired)")
        try expect(
            try await a.read(after: startA.position, through: readA.claim.last, limit: 10).isEmpty,
            "deleted events are still read")
    }

    mutating func retentionByCount() async throws {
        let (a, start) = try await opened("a")
        let (b, _) = try await opened("b")
        let epochA = try await leased(a)
        let appended = envelopes.next(10)
        try await store.append(appended)
        let readA = try await claimAndRead(a, after: start.position, limit: 4, epoch: epochA, expecting: 4)
        _ = try await a.acknowledge(readA.claim.last, claim: .keep, epoch: epochA)
        let deleted = try await store.cleanUp(DurableRetention(count: 3))
        try expect(deleted == 7, "retention of 3 of 10 deleted \(deleted)")
        try expect(try await store.cleanUp(DurableRetention(count: 3)) == 0, "a second cleanup deleted more")
        var stateB = try await b.open()
        try await expectExpired(a, 3, "a (which had read 4)")
        try expect(stateB.expired == 7, "b (which had read none) has \(stateB.expired) expired")
        stateB = try await b.open()
        try expect(stateB.expired == 7, "opening again reset the expired count to \(stateB.expired)")
        let epochB = try await leased(b)
        let reported = try await b.acknowledge(stateB.position, claim: .keep, epoch: epochB)
        try expect(reported == 7, "the acknowledgement reported \(reported) expired, not 7")
        try expect(try await b.open().expired == 0, "the acknowledgement did not reset the expired count")
        try expect(
            try await b.acknowledge(stateB.position, claim: .keep, epoch: epochB) == 0,
            "a second acknowledgement reported expired events again")
        let rest = try await claimAndRead(b, after: stateB.position, epoch: epochB)
        try expect(rest.claim.count == 3, "b claimed \(rest.claim.count) of the 3 kept")
        try expect(rest.events.map(\.envelope) == Array(appended[7...]), "b read \(rest.events.count) events")
        let nextA = try await claimAndRead(a, after: readA.claim.last, epoch: epochA)
        try expect(
            nextA.claim.expired == 3,
            "a's next claim carried \(nextA.claim.expired) expired, not its 3 (a reader reports them before the batch)")
        try expect(
            try await a.acknowledge(readA.claim.last, claim: .keep, epoch: epochA) == 3, "a was not told of its 3")
    }

    mutating func retentionByAge() async throws {
        let (a, _) = try await opened("a")
        try await store.append(envelopes.next(3))
        try await Task.sleep(for: .milliseconds(700))
        try await store.append(envelopes.next(2))
        let deleted = try await store.cleanUp(DurableRetention(age: .milliseconds(350)))
        try expect(deleted == 3, "retention of 350 ms deleted \(deleted) (3 are 700 ms old, 2 new)")
        try await expectExpired(a, 3, "a")
        try expect(try await store.cleanUp(DurableRetention(age: .seconds(60))) == 0, "a long age deleted events")
        try expect(
            try await store.cleanUp(DurableRetention(count: 5, age: .milliseconds(350))) == 0,
            "neither bound allows a deletion, yet one happened")
        try expect(
            try await store.cleanUp(DurableRetention(count: 1, age: .seconds(60))) == 1,
            "the count's bound (the larger) did not win")
        try await expectExpired(a, 4, "a")
    }

    mutating func retentionKeepsClaimed() async throws {
        let (a, start) = try await opened("a")
        let (b, _) = try await opened("b")
        let epochA = try await leased(a)
        let appended = envelopes.next(6)
        try await store.append(appended)
        let claim = try await claimAndRead(a, after: start.position, limit: 3, epoch: epochA, expecting: 3).claim
        let deleted = try await store.cleanUp(DurableRetention(count: 0))
        try expect(deleted == 3, "retention of 0 deleted \(deleted), not the 3 unclaimed")
        let state = try await a.open()
        try expect(state.expired == 3 && state.claimed == claim.last, "a after the cleanup: \(state)")
        try await expectExpired(b, 3, "b")
        let events = try await a.read(after: start.position, through: claim.last, limit: 10)
        try expect(events.map(\.envelope) == Array(appended[0..<3]), "the claimed batch lost events")
        try expect(try await a.acknowledge(claim.last, claim: .keep, epoch: epochA) == 3, "a was not told of its 3")
        try expect(try await store.cleanUp(DurableRetention(count: 0)) == 3, "acknowledged, the batch was kept")
        try expect(try await a.open().expired == 0, "a counted events it had read as expired")
        try await expectExpired(b, 6, "b")
    }

    // MARK: Partitions

    /// A partition cursor of group "group" (2 partitions).
    static func partition(_ index: Int) -> DurableConsumerID {
        DurableConsumerID(group: "group", partition: index, of: 2)
    }

    mutating func partitionReadsItsOwn() async throws {
        let keys = (ConformanceEnvelopes.key(inPartition: 0, of: 2), ConformanceEnvelopes.key(inPartition: 1, of: 2))
        let (zero, startZero) = try await opened(Self.partition(0))
        let (one, startOne) = try await opened(Self.partition(1))
        let (epochZero, epochOne) = (try await leased(zero), try await leased(one))
        let appended = [
            envelopes.next(key: keys.0), envelopes.next(key: keys.1), envelopes.next(key: keys.1),
            envelopes.next(key: keys.0), envelopes.next(key: keys.0), envelopes.next(key: keys.1),
        ]
        try await store.append(appended)
        let readZero = try await claimAndRead(zero, after: startZero.position, epoch: epochZero, expecting: 3)
        let readOne = try await claimAndRead(one, after: startOne.position, epoch: epochOne, expecting: 3)
        try expect(
            readZero.claim.count == 3 && readOne.claim.count == 3,
            "claimed \(readZero.claim.count), \(readOne.claim.count)")
        try expect(
            readZero.events.map(\.envelope) == [appended[0], appended[3], appended[4]], "partition 0 read others'")
        try expect(
            readOne.events.map(\.envelope) == [appended[1], appended[2], appended[5]], "partition 1 read others'")
        try expect(readZero.claim.last == readOne.claim.last, "both batches end at the horizon, the last event")
    }

    mutating func partitionHorizon() async throws {
        let keys = (ConformanceEnvelopes.key(inPartition: 0, of: 2), ConformanceEnvelopes.key(inPartition: 1, of: 2))
        let (all, startAll) = try await opened("all")
        let (zero, start) = try await opened(Self.partition(0))
        let (epochAll, epoch) = (try await leased(all), try await leased(zero))
        let appended = [
            envelopes.next(key: keys.0), envelopes.next(key: keys.1), envelopes.next(key: keys.0),
            envelopes.next(key: keys.1), envelopes.next(key: keys.1),
        ]
        try await store.append(appended)
        let at = try await claimAndRead(all, after: startAll.position, epoch: epochAll, expecting: 5).events.map(
            \.position)
        try expect(at.count == 5, "a plain cursor read \(at.count) of 5")
        let full = try await claimAndRead(zero, after: start.position, limit: 1, epoch: epoch)
        try expect(full.claim.count == 1 && full.claim.last == at[0], "a full batch of 1 ends at its event")
        _ = try await zero.acknowledge(full.claim.last, claim: .keep, epoch: epoch)
        let partial = try await claimAndRead(zero, after: at[0], limit: 10, epoch: epoch)
        try expect(partial.claim.count == 1, "claimed \(partial.claim.count) of partition 0's 1 remaining")
        try expect(partial.claim.last == at[4], "a batch not full ends at \(partial.claim.last), not the horizon")
        try expect(partial.events.map(\.envelope) == [appended[2]], "read \(partial.events.map(\.envelope))")
        _ = try await zero.acknowledge(partial.claim.last, claim: .keep, epoch: epoch)
        try expect(try await zero.claim(after: at[4], limit: 10, epoch: epoch) == nil, "claimed past the last event")
        try await store.append([envelopes.next(key: keys.1)])
        let others = try await claimAndRead(zero, after: at[4], limit: 10, epoch: epoch)
        try expect(others.claim.count == 0 && others.events.isEmpty, "partition 0 claimed partition 1's event")
        try expect(others.claim.last > at[4], "the horizon did not move past partition 1's new event")
    }

    mutating func partitionExpired() async throws {
        let keys = (ConformanceEnvelopes.key(inPartition: 0, of: 2), ConformanceEnvelopes.key(inPartition: 1, of: 2))
        let (zero, start) = try await opened(Self.partition(0))
        let (one, startOne) = try await opened(Self.partition(1))
        let (plain, _) = try await opened("plain")
        try await store.append([
            envelopes.next(key: keys.0), envelopes.next(key: keys.1), envelopes.next(key: keys.0),
            envelopes.next(key: keys.0), envelopes.next(key: keys.1), envelopes.next(key: keys.0),
        ])
        // Partition 1 reads its first event (the second): only its event after that one expires.
        let epochOne = try await leased(one)
        let first = try await claimAndRead(one, after: startOne.position, limit: 1, epoch: epochOne, expecting: 1)
        try expect(first.claim.count == 1 && first.events.count == 1, "partition 1 read \(first.events.count) of 1")
        _ = try await one.acknowledge(first.claim.last, claim: .keep, epoch: epochOne)
        try expect(try await store.cleanUp(DurableRetention(count: 0)) == 6, "retention of 0 kept events")
        var expired = (try await zero.open().expired, try await one.open().expired, try await plain.open().expired)
        try expect(expired == (4, 1, 6), "expired (partition 0, partition 1, plain): \(expired), not (4, 1, 6)")
        // Partition 0's claim over partition 1's events (its horizon) keeps them.
        let epoch = try await leased(zero)
        try await store.append([envelopes.next(key: keys.1), envelopes.next(key: keys.1)])
        let claim = try await claimAndRead(zero, after: start.position, limit: 10, epoch: epoch).claim
        try expect(claim.count == 0, "partition 0 claimed \(claim.count) of its 0 events")
        try expect(try await store.cleanUp(DurableRetention(count: 0)) == 0, "retention deleted claimed events")
        try expect(try await zero.acknowledge(claim.last, claim: .keep, epoch: epoch) == 4, "partition 0 not told")
        try expect(try await store.cleanUp(DurableRetention(count: 0)) == 2, "the released events were kept")
        expired = (try await zero.open().expired, try await one.open().expired, try await plain.open().expired)
        try expect(expired == (0, 3, 8), "expired after the second cleanup: \(expired), not (0, 3, 8)")
    }
}
