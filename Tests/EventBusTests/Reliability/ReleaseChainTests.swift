import Dispatch
import Testing

@testable import EventBus  // test helpers only (Shared, onThread); the bus is used through its public API

/// Long runs of subscriptions whose owners are gone and whose release calls the bus again (a
/// handler's captured `DisposeBag`, an owner-bound stream's feed): reclaiming them must not nest
/// one release inside the next. Before `ReleaseLoop`, each such release reached the next through
/// the bus's sweep, and a run of 600 overflowed a 512 KiB stack.
@Suite("Reliability: releases whose deinits call the bus do not nest", .offThePool)
struct ReleaseChainTests {
    /// More than a 512 KiB stack survived when each release nested the next (600 in release
    /// builds, fewer in debug ones).
    static let run = 5_000
    /// Small enough that nesting overflows it; large enough for one release under a sanitizer.
    static let stackSize = underStackHungrySanitizer ? 4 << 20 : 512 << 10

    final class Owner: Sendable {}
    struct Reading: Event { var value = 0 }
    struct Unrelated: Event {}

    /// `run` owner-bound subscriptions to `Reading`, each handler holding a bag with a token of a
    /// `Ping` subscription, and the owners; dropping an owner lets the sweep reclaim its
    /// subscription, whose release deinits the bag, which disposes the `Ping` subscription.
    static func subscriptionsHoldingBags(on bus: EventBus) -> [Owner] {
        (0..<run).map { _ in
            let owner = Owner()
            let bag = DisposeBag()
            bus.on(Ping.self).next { _ in }.disposed(by: bag)
            bus.on(Reading.self).freeWith(owner).next { _, _ in withExtendedLifetime(bag) {} }
            return owner
        }
    }

    @Test("purge() reclaims a run of dead owners whose handlers hold bags, on a 512 KiB stack")
    func purgeReleasesInALoop() {
        let bus = EventBus()
        var owners = Self.subscriptionsHoldingBags(on: bus)
        #expect(bus.subscriptionCount == 2 * Self.run)
        owners.removeAll()

        let finished = onThread(stackSize: Self.stackSize) { [unowned bus] in bus.purge() }

        #expect(finished)
        #expect(bus.subscriptionCount == 0)
        print("ReleaseChain: purge() reclaimed \(Self.run) dead owners whose bags disposed \(Self.run) more")
    }

    @Test("The incremental sweep alone reclaims such a run, on a 512 KiB stack")
    func sweepReleasesInALoop() {
        let bus = EventBus()
        var owners = Self.subscriptionsHoldingBags(on: bus)
        owners.removeAll()

        let dispatches = Shared(0)
        let finished = onThread(stackSize: Self.stackSize) { [unowned bus] in
            // The sweep checks a small constant number of owned subscriptions per operation.
            while bus.subscriptionCount > 0 && dispatches.value < 20 * Self.run {
                bus.dispatch(Unrelated())
                dispatches.increment()
            }
        }

        #expect(finished)
        #expect(bus.subscriptionCount == 0)
        print(
            "ReleaseChain: \(dispatches.value) dispatches of an unrelated type reclaimed \(2 * Self.run) subscriptions"
        )
    }

    @Test("Owner-bound streams of dead owners all finish after purge() on a 512 KiB stack")
    func streamsFinish() async {
        let bus = EventBus()
        var owners = (0..<Self.run).map { _ in Owner() }
        let streams = owners.map { bus.on(Reading.self).freeWith($0).events() }
        owners.removeAll()

        let finished = onThread(stackSize: Self.stackSize) { [unowned bus] in bus.purge() }

        #expect(finished)
        #expect(bus.subscriptionCount == 0)
        var ended = 0
        for stream in streams {
            var events = stream.makeAsyncIterator()
            if await events.next() == nil { ended += 1 }
        }
        #expect(ended == Self.run)
        print("ReleaseChain: purge() reclaimed \(Self.run) owner-bound streams of dead owners; \(ended) finished")
    }
}
