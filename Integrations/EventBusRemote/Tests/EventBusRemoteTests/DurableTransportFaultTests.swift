import EventBus
import EventBusRemote
import Foundation
import Testing

/// Faults to inject into a store's calls, by operation.
final class StoreFaults: @unchecked Sendable {
    // @unchecked Sendable: `pending` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var pending: [String: Int] = [:]

    /// Fails the next `count` calls of `operation` ("renew", "claim").
    func fail(_ operation: String, times count: Int = 1) {
        lock.withLock { pending[operation, default: 0] += count }
    }

    /// Whether this call of `operation` fails (and counts it).
    func take(_ operation: String) -> Bool {
        lock.withLock {
            guard let left = pending[operation], left > 0 else { return false }
            pending[operation] = left - 1
            return true
        }
    }
}

/// The store failure a faulty store throws.
struct InjectedFault: Error {}

/// An InMemoryDurableStore whose cursors fail on demand, and which does not wake its readers (a
/// store of another process, read by polling).
struct FaultyStore: DurableStore {
    let base = InMemoryDurableStore()
    let faults = StoreFaults()

    func append(_ envelopes: [String]) async throws { try await base.append(envelopes) }

    func cursor(_ consumer: DurableConsumerID, owner: UUID) -> FaultyCursor {
        FaultyCursor(base: base.cursor(consumer, owner: owner), faults: faults)
    }

    func cleanUp(_ retention: DurableRetention) async throws -> Int { try await base.cleanUp(retention) }
}

struct FaultyCursor: DurableCursor {
    let base: InMemoryDurableCursor
    let faults: StoreFaults

    var id: DurableConsumerID { base.id }
    var leaseLost: any Error { base.leaseLost }

    func open() async throws -> DurableCursorState<Int64> { try await base.open() }

    func takeLease(for duration: Duration) async throws -> Int64? { try await base.takeLease(for: duration) }

    func renewLease(_ epoch: Int64, for duration: Duration) async throws -> Bool {
        // A failed renewal: as if another owner had taken the lease.
        if faults.take("renew") { return false }
        return try await base.renewLease(epoch, for: duration)
    }

    func releaseLease(_ epoch: Int64?) async throws { try await base.releaseLease(epoch) }

    func claim(after position: Int64, limit: Int, epoch: Int64) async throws -> DurableClaim<Int64>? {
        if faults.take("claim") { throw InjectedFault() }
        return try await base.claim(after: position, limit: limit, epoch: epoch)
    }

    func read(after position: Int64, through last: Int64, limit: Int) async throws -> [DurableEvent<Int64>] {
        try await base.read(after: position, through: last, limit: limit)
    }

    func acknowledge(_ position: Int64, claim: DurableClaimUpdate<Int64>, epoch: Int64) async throws -> Int {
        try await base.acknowledge(position, claim: claim, epoch: epoch)
    }
}

@Suite("DurableTransport after store faults: it reports the interruption, reads again, and loses and repeats nothing")
struct DurableTransportFaultTests {
    static func isInterrupted(_ status: BridgeStatus) -> Bool {
        if case .interrupted = status { true } else { false }
    }

    static func isResumed(_ status: BridgeStatus) -> Bool {
        if case .resumed = status { true } else { false }
    }

    @Test("a store that throws mid-stream: interrupted, resumed, every event once and in order")
    func storeFailure() async throws {
        let store = FaultyStore()
        let shop = DurableNode(store, consumer: "shop")
        let mailer = DurableNode(store, consumer: "mailer")
        await mailer.start()
        for n in 1...10 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await mailer.pings.wait { $0.count == 10 })
        store.faults.fail("claim", times: 2)
        for n in 11...20 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await mailer.pings.wait { $0.count == 20 })
        try await Task.sleep(for: .milliseconds(100))
        #expect(mailer.pings.events.map(\.n) == Array(1...20))
        #expect(mailer.statuses.events.contains(where: Self.isInterrupted))
        #expect(mailer.statuses.events.contains(where: Self.isResumed))
        #expect(!mailer.issues.events.contains { if case .redelivered = $0 { true } else { false } })
        await mailer.stop()
    }

    @Test(
        "a lease lost to a failed renewal: the reader stops, takes the lease again (the next epoch, its own) and goes on"
    )
    func leaseLost() async throws {
        let store = FaultyStore()
        let shop = DurableNode(store, consumer: "shop")
        let mailer = DurableNode(store, consumer: "mailer")
        await mailer.start()
        for n in 1...5 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await mailer.pings.wait { $0.count == 5 })
        store.faults.fail("renew")
        #expect(await mailer.statuses.wait { $0.contains(where: Self.isResumed) })
        for n in 6...10 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }
        #expect(await mailer.pings.wait { $0.count == 10 })
        try await Task.sleep(for: .milliseconds(100))
        #expect(mailer.pings.events.map(\.n) == Array(1...10))
        #expect(!mailer.issues.events.contains { if case .redelivered = $0 { true } else { false } })
        await mailer.stop()
    }

    @Test(
        "after a store interruption, an origin first heard with a later sequence (its first events before the cursor) is no loss: nothing reported"
    )
    func noFalseLossAfterInterruption() async throws {
        let store = FaultyStore()
        let shop = DurableNode(store, consumer: "shop")
        for n in 1...3 { try await shop.bridge.publish(Ping(from: "shop", n: n)) }  // before the mailer's cursor
        let mailer = DurableNode(store, consumer: "mailer")
        await mailer.start()
        store.faults.fail("claim")
        #expect(await mailer.statuses.wait { $0.contains(where: Self.isResumed) })
        try await shop.bridge.publish(Ping(from: "shop", n: 4))
        #expect(await mailer.pings.wait { $0.count == 1 })
        try await Task.sleep(for: .milliseconds(100))
        #expect(mailer.pings.events.map(\.n) == [4])
        #expect(mailer.issues.events.isEmpty, "\(mailer.issues.events)")
        await mailer.stop()
    }
}
