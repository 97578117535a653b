import Dispatch
import Testing

@testable import EventBus  // test helpers only (concurrently); the bus and the bag are used through their public API

/// A `DisposeBag` forgets tokens that were disposed some other way, so that a
/// long-lived bag does not grow (DESIGN §3), and it does so without waiting for a later insert.
@Suite("DisposeBag forgets tokens disposed elsewhere", .tags(.stress), .offThePool)
struct DisposeBagForgettingTests {
    struct Tapped: Event {}

    final class Owner: Sendable {
        init() {}
    }

    /// What "small" means for a bag whose tokens have all ended: a bag may keep a handful of
    /// ended tokens until its next operation, never a number that grows with what it has seen.
    static let small = 32

    @Test(
        "100,000 tokens inserted, then disposed directly (not through the bag): the bag counts none of them, with no further insert"
    )
    func disposedDirectly() {
        let bus = EventBus()
        let bag = DisposeBag()
        let tokens = (0..<100_000).map { _ in bus.on(Tapped.self).next { _ in } }
        for token in tokens { bag.insert(token) }
        #expect(bag.count == tokens.count)
        for token in tokens { token.dispose() }
        #expect(bus.subscriptionCount == 0)
        let count = bag.count
        #expect(count <= Self.small, "the bag still counts \(count) of \(tokens.count) tokens disposed elsewhere")
        print("DisposeBag: \(tokens.count) tokens inserted then disposed directly; the bag counts \(count)")
        bag.dispose()  // disposing what is already disposed is a no-op
        #expect(bag.count == 0)
    }

    @Test("tokens disposed directly from 4 threads: the bag counts none of them, and can still be used")
    func disposedDirectlyFromSeveralThreads() {
        let bus = EventBus()
        let bag = DisposeBag()
        let threads = 4
        let perThread = 10_000
        let tokens = (0..<threads * perThread).map { _ in bus.on(Tapped.self).next { _ in } }
        for token in tokens { bag.insert(token) }
        let finished = concurrently(threads) { thread in
            for index in stride(from: thread, to: tokens.count, by: threads) { tokens[index].dispose() }
        }
        #expect(finished)
        let count = bag.count
        #expect(count <= Self.small, "the bag still counts \(count) of \(tokens.count) tokens disposed elsewhere")
        // The bag still works: a new token is held, and disposed with the bag.
        let later = bus.on(Tapped.self).next { _ in }
        bag.insert(later)
        #expect(bag.count <= Self.small + 1)
        bag.dispose()
        #expect(later.isDisposed)
        #expect(bus.subscriptionCount == 0)
        print(
            "DisposeBag: \(tokens.count) tokens disposed directly on \(threads) threads; the bag counted \(count) afterwards"
        )
    }

    @Test("tokens whose owner died and that the bus reclaimed (isDisposed) are not counted by the bag either")
    func endedByOwnerDeath() {
        let bus = EventBus()
        let bag = DisposeBag()
        let subscriptions = 10_000
        var owners: [Owner] = (0..<subscriptions).map { _ in Owner() }
        let tokens = owners.map { bus.on(Tapped.self).freeWith($0).next { _, _ in } }
        for token in tokens { bag.insert(token) }
        owners.removeAll()
        bus.purge()
        #expect(tokens.allSatisfy { $0.isDisposed }, "purge() ended every subscription whose owner died")
        let count = bag.count
        #expect(
            count <= Self.small, "the bag still counts \(count) of \(subscriptions) tokens that ended with their owner")
        print("DisposeBag: \(subscriptions) owner-bound tokens ended by their owners' death; the bag counts \(count)")
    }

    @Test(
        "A bag and the subscriptions in it hold each other only while those are live: dropped in either order, bus and bag leave nothing alive"
    )
    func bagMakesNoLastingCycle() {
        for bagFirst in [true, false] {
            weak var index: BusCore?
            weak var weakBag: DisposeBag?
            do {
                let bus = EventBus()
                index = bus.core
                var bag: DisposeBag? = DisposeBag()
                weakBag = bag
                bus.on(Tapped.self).next { _ in }.disposed(by: bag!)
                let ended = bus.on(Tapped.self).next { _ in }
                ended.disposed(by: bag!)
                ended.dispose()  // ended some other way: the bag is told, the node lets go of it
                if bagFirst { bag = nil }
                #expect(bus.subscriptionCount == (bagFirst ? 0 : 1))
                _ = bag
            }
            #expect(weakBag == nil, "bag dropped \(bagFirst ? "before" : "after") the bus")
            #expect(index == nil, "bag dropped \(bagFirst ? "before" : "after") the bus")
        }
    }
}
