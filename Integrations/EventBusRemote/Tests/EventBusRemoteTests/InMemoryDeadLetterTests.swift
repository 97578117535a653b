import Foundation
import Testing

@testable import EventBusRemote

@Suite("InMemoryDurableStore's dead letters: what the conformance suite does not cover (ids, waking, the retry)")
struct InMemoryDeadLetterTests {
    /// `count` events appended to `store`, read by a cursor of `consumer` leased to a new owner;
    /// the cursor and the lease's epoch.
    static func read(_ count: Int, from store: InMemoryDurableStore, as consumer: String) async throws -> (
        events: [DurableEvent<Int64>], cursor: InMemoryDurableCursor, epoch: Int64
    ) {
        let cursor = store.cursor(DurableConsumerID(consumer), owner: UUID())
        let start = try await cursor.open()
        let epoch = try #require(try await cursor.takeLease(for: .seconds(30)))
        try await store.append((1...count).map { "event \($0)" })
        let claim = try #require(try await cursor.claim(after: start.position, limit: 100, epoch: epoch))
        return (try await cursor.read(after: start.position, through: claim.last, limit: 100), cursor, epoch)
    }

    @Test("ids count from 1; the event id is the event's position; a requeue that marks wakes the wakers")
    func idsAndWaking() async throws {
        let store = InMemoryDurableStore()
        try await store.append(["before"])
        let (events, _, _) = try await Self.read(2, from: store, as: "c")
        #expect(events.map(\.position) == [2, 3])
        var ids: [Int64] = []
        for event in events {
            ids.append(try await store.deadLetter(event, of: "c", wireName: "w", attempts: 1, reason: "r"))
        }
        #expect(ids == [1, 2])
        #expect(try await store.deadLetters(of: nil, after: 0, limit: 10).map(\.eventID) == [2, 3])
        let waker = DurableWaker()
        store.register(waker)
        #expect(try await store.requeueDeadLetters(3, of: nil) == 0)  // unknown: no wake-up
        #expect(await InMemoryDurableStoreTests.waited(waker, atMost: .milliseconds(100)) >= .milliseconds(100))
        #expect(try await store.requeueDeadLetters(nil, of: "c") == 2)
        #expect(await InMemoryDurableStoreTests.waited(waker, atMost: .seconds(5)) < .seconds(2), "not woken")
        // Retention deletes the events, not their letters.
        _ = try await store.cleanUp(DurableRetention(count: 0))
        #expect(try await store.deadLetters(of: "c", after: 0, limit: 10).map(\.envelope) == ["event 1", "event 2"])
    }

    @Test("letters set aside from 8 tasks at once: distinct ids, listed in id order")
    func concurrentSetAside() async throws {
        let store = InMemoryDurableStore()
        let (events, _, _) = try await Self.read(1, from: store, as: "c")
        let event = try #require(events.first)
        let ids = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var ids: [Int64] = []
                    for _ in 0..<25 {
                        ids.append(
                            try await store.deadLetter(event, of: "c#\(task)", wireName: "w", attempts: 1, reason: ""))
                    }
                    return ids
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(ids) == Set(1...200))
        #expect(try await store.deadLetters(of: "c", after: 0, limit: 1_000).map(\.id) == Array(1...200))
        print("in-memory dead letters: 8 tasks × 25 set aside at once: \(Set(ids).count) distinct ids")
    }

    @Test(
        "a requeued letter's retry: the oldest of the exact consumer, fenced by its lease, deleted or set aside again")
    func retry() async throws {
        let store = InMemoryDurableStore()
        let (events, cursor, epoch) = try await Self.read(3, from: store, as: "g#1")
        let owner = cursor.owner
        for event in events {
            _ = try await store.deadLetter(event, of: "g#1", wireName: "w", attempts: 3, reason: "failed")
        }
        #expect(store.takeRequeuedDeadLetter(of: "g#1", owner: owner, epoch: epoch) == nil)  // none requeued
        #expect(try await store.requeueDeadLetters(nil, of: "g") == 3)
        #expect(store.takeRequeuedDeadLetter(of: "g", owner: owner, epoch: epoch) == nil)  // not the group's name
        #expect(store.takeRequeuedDeadLetter(of: "g#1", owner: UUID(), epoch: epoch) == nil)  // not the holder
        let first = try #require(store.takeRequeuedDeadLetter(of: "g#1", owner: owner, epoch: epoch))
        #expect(first.letter.id == 1 && first.tries == 1)
        #expect(store.takeRequeuedDeadLetter(of: "g#1", owner: owner, epoch: epoch)?.tries == 2)  // counted again
        #expect(throws: DurableStoreError.leaseLost(consumer: "g#1")) {
            try store.settleRequeuedDeadLetter(1, of: "g#1", owner: owner, epoch: epoch + 1, failure: nil)
        }
        #expect(try store.settleRequeuedDeadLetter(1, of: "g#1", owner: owner, epoch: epoch, failure: nil))
        #expect(try !store.settleRequeuedDeadLetter(1, of: "g#1", owner: owner, epoch: epoch, failure: nil))
        let second = try #require(store.takeRequeuedDeadLetter(of: "g#1", owner: owner, epoch: epoch))
        #expect(second.letter.id == 2 && second.tries == 1)
        let before = try #require(try await store.deadLetters(of: nil, after: 1, limit: 1).first)
        #expect(
            try store.settleRequeuedDeadLetter(2, of: "g#1", owner: owner, epoch: epoch, failure: (1, "failed again")))
        let letters = try await store.deadLetters(of: nil, after: 0, limit: 10)
        #expect(letters.map(\.id) == [2, 3])
        let again = try #require(letters.first)
        #expect(again.attempts == 4 && again.reason == "failed again" && again.requeuedAt == nil)
        #expect(again.deadAt >= before.deadAt && again.eventID == before.eventID && again.envelope == before.envelope)
        // Set aside again: requeued again, its retries count from 1 again.
        #expect(try await store.requeueDeadLetters(2, of: nil) == 1)
        let third = try #require(store.takeRequeuedDeadLetter(of: "g#1", owner: owner, epoch: epoch))
        #expect(third.letter.id == 2 && third.tries == 1)
    }
}
