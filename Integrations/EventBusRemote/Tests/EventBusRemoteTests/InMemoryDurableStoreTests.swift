import EventBusRemote
import Foundation
import Testing

@Suite("InMemoryDurableStore: what the conformance suite does not cover (waking, unopened cursors, atomic appends)")
struct InMemoryDurableStoreTests {
    /// Waits on `waker` for `limit` at most; how long it took.
    static func waited(_ waker: DurableWaker, atMost limit: Duration) async -> Duration {
        let start = ContinuousClock.now
        await waker.wait(atMost: limit)
        return ContinuousClock.now - start
    }

    @Test("appends and released leases wake the registered wakers; an unregistered one is not woken")
    func waking() async throws {
        let store = InMemoryDurableStore()
        let waker = DurableWaker()
        store.register(waker)
        store.register(waker)  // once
        try await store.append(["a"])
        #expect(await Self.waited(waker, atMost: .seconds(5)) < .seconds(2), "an append did not wake")
        let cursor = store.cursor(DurableConsumerID("c"), owner: UUID())
        _ = try await cursor.open()
        let epoch = try #require(try await cursor.takeLease(for: .seconds(30)))
        try await cursor.releaseLease(epoch)
        #expect(await Self.waited(waker, atMost: .seconds(5)) < .seconds(2), "a release did not wake")
        try await cursor.releaseLease(epoch)  // not held: no wake-up
        try await store.append([])  // nothing appended: no wake-up
        #expect(await Self.waited(waker, atMost: .milliseconds(100)) >= .milliseconds(100), "woken for nothing")
        store.unregister(waker)
        try await store.append(["b"])
        #expect(await Self.waited(waker, atMost: .milliseconds(100)) >= .milliseconds(100), "unregistered, woken")
    }

    @Test("a cursor never opened has no lease to take and moves nothing; opening creates it after the last event")
    func unopenedCursor() async throws {
        let store = InMemoryDurableStore()
        try await store.append(["a", "b"])
        let cursor = store.cursor(DurableConsumerID("c"), owner: UUID())
        #expect(try await cursor.takeLease(for: .seconds(30)) == nil)
        await #expect(throws: DurableStoreError.leaseLost(consumer: "c")) {
            try await cursor.acknowledge(1, claim: .keep, epoch: 0)
        }
        let state = try await cursor.open()
        #expect(state.position == 2 && state.claimed == nil && state.expired == 0)
        #expect(try await cursor.takeLease(for: .seconds(30)) == 1)
        #expect(store.count == 2)
        #expect(DurableStoreError.leaseLost(consumer: "c").description.contains("consumer c"))
    }

    @Test("appends from 8 tasks at once: every event stored once, each append's events contiguous and in order")
    func atomicAppends() async throws {
        let store = InMemoryDurableStore()
        let cursor = store.cursor(DurableConsumerID("c"), owner: UUID())
        let start = try await cursor.open()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for batch in 0..<50 {
                        try await store.append((0..<4).map { "\(writer).\(batch).\($0)" })
                    }
                }
            }
            try await group.waitForAll()
        }
        let epoch = try #require(try await cursor.takeLease(for: .seconds(30)))
        let claim = try #require(try await cursor.claim(after: start.position, limit: 10_000, epoch: epoch))
        let events = try await cursor.read(after: start.position, through: claim.last, limit: 10_000)
        #expect(claim.count == 1_600 && events.count == 1_600)
        #expect(events.map(\.position) == Array(1...1_600))
        for index in stride(from: 0, to: events.count, by: 4) {
            let batch = events[index..<index + 4].map(\.envelope)
            let prefix = batch[0].dropLast(2)
            #expect(batch == (0..<4).map { "\(prefix).\($0)" }, "an append interleaved: \(batch)")
        }
        print(
            "in-memory store: 8 tasks × 50 appends of 4 at once: \(events.count) events stored, positions 1...\(events.count)"
        )
    }

    @Test("overlapping claims of two cursors protect their union from retention, and only it")
    func overlappingClaims() async throws {
        let store = InMemoryDurableStore()
        let a = store.cursor(DurableConsumerID("a"), owner: UUID())
        let b = store.cursor(DurableConsumerID("b"), owner: UUID())
        _ = try await a.open()
        _ = try await b.open()
        try await store.append((1...10).map { "e\($0)" })
        let (epochA, epochB) = (
            try #require(try await a.takeLease(for: .seconds(30))),
            try #require(try await b.takeLease(for: .seconds(30)))
        )
        _ = try await a.acknowledge(2, claim: .keep, epoch: epochA)
        _ = try await a.claim(after: 2, limit: 3, epoch: epochA)  // (2, 5]
        _ = try await b.acknowledge(4, claim: .keep, epoch: epochB)
        _ = try await b.claim(after: 4, limit: 3, epoch: epochB)  // (4, 7]
        // Passed by both: 1, 2. Retention of 0 then: 8, 9, 10 (3...7 claimed).
        #expect(try await store.cleanUp(DurableRetention(count: 0)) == 5)
        #expect(store.count == 5)
        #expect(try await a.read(after: 2, through: 10, limit: 100).map(\.envelope) == (3...7).map { "e\($0)" })
        let expired = (try await a.open().expired, try await b.open().expired)
        #expect(expired == (3, 3))
    }
}
