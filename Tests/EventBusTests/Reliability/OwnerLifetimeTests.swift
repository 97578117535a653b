import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Battery item 4: owner lifetimes under concurrency. 10,000 owners, each with one subscription,
/// are released on 4 threads while 2 threads dispatch. No handler may run after its owner's deinit
/// finished; each owner's deinit probes that it is not running under the bus lock; every handler
/// closure is released within the documented bound.
@Suite("Reliability: owner lifetimes", .tags(.stress), .offThePool)
struct OwnerLifetimeTests {
    static let owners = 10_000
    static let releasers = 4
    static let dispatchers = 2

    struct Beat: Event {
        let n: Int
        var eventType: String? { n % 2 == 0 ? "even" : nil }
    }

    /// What happened to every owner, by id.
    final class Book: Sendable {
        struct State {
            var deinitFinished: [Bool]
            var deliveries = 0
            var deliveriesAfterDeinit: [Int] = []
            var deinitsUnderLock = 0
            var closuresReleased = 0
        }
        let state: Shared<State>
        init(count: Int) { state = Shared(State(deinitFinished: Array(repeating: false, count: count))) }

        func delivered(to id: Int) {
            state.withLock {
                $0.deliveries += 1
                if $0.deinitFinished[id] { $0.deliveriesAfterDeinit.append(id) }
            }
        }
    }

    final class Owner: Sendable {
        let id: Int
        let book: Book
        let bus: EventBus
        let probe: BusCallProbe
        init(id: Int, book: Book, bus: EventBus, probe: BusCallProbe) {
            self.id = id
            self.book = book
            self.bus = bus
            self.probe = probe
        }
        deinit {
            // If this deinit ran under the bus lock (the bus dropping the last reference while it
            // holds it), the probe's call would block and time out.
            let bus = bus
            let free = probe.completes(timeout: .seconds(2)) { _ = bus.subscriptionCount }
            book.state.withLock {
                if !free { $0.deinitsUnderLock += 1 }
                $0.deinitFinished[id] = true
            }
        }
    }

    /// The owners one releasing thread holds (the only strong references to them).
    final class Pile: @unchecked Sendable {
        // @unchecked Sendable: filled before the threads start, then touched only by its releaser.
        var owners: [Owner?] = []
    }

    @Test("10,000 owners released on 4 threads while 2 threads dispatch: no handler after deinit, closures released")
    func ownersReleasedWhileDispatching() {
        let bus = EventBus()
        let book = Book(count: Self.owners)
        let probe = BusCallProbe()
        let started = DispatchTime.now()
        let piles = (0..<Self.releasers).map { _ in Pile() }
        for id in 0..<Self.owners {
            let owner = Owner(id: id, book: book, bus: bus, probe: probe)
            let capture = DeinitAction { book.state.withLock { $0.closuresReleased += 1 } }
            var maker = bus.on(Beat.self)
            if id % 3 == 0 { maker = maker.ofType("even") }
            if id % 2 == 0 {
                maker.freeWith(owner).next { owner, _ in
                    withExtendedLifetime(capture) { book.delivered(to: owner.id) }
                }
            } else {
                maker.freeWith(owner).next { _, _ in withExtendedLifetime(capture) { book.delivered(to: id) } }
            }
            piles[id % Self.releasers].owners.append(owner)
        }
        #expect(bus.subscriptionCount(of: Beat.self) == Self.owners)

        let releasing = Shared(Self.releasers)
        let dispatched = Shared(0)
        let finished = concurrently(Self.releasers + Self.dispatchers, timeout: .seconds(120)) { thread in
            if thread < Self.releasers {
                let pile = piles[thread]
                var random = SplitMix64(seed: UInt64(thread + 1))
                for index in pile.owners.indices {
                    pile.owners[index] = nil
                    if random.next(below: 8) == 0 { sched_yield() }
                }
                releasing.withLock { $0 -= 1 }
            } else {
                var n = thread
                while releasing.value > 0 {
                    bus.dispatch(Beat(n: n))
                    n += 2
                }
                dispatched.withLock { $0 += n / 2 }
            }
        }
        #expect(finished, "threads did not finish in time")
        guard finished else { return }

        // Every owner is gone. The bound: the next dispatch that reaches a dead subscription
        // reclaims the dead subscriptions of the type, releasing their closures before it returns.
        bus.dispatch(Beat(n: 0))
        let state = book.state.value
        #expect(state.deinitFinished.allSatisfy { $0 })
        #expect(
            state.deliveriesAfterDeinit.isEmpty,
            "handlers ran after their owner's deinit: \(state.deliveriesAfterDeinit.prefix(10))")
        #expect(state.deinitsUnderLock == 0, "\(state.deinitsUnderLock) owner deinits ran under the bus lock")
        #expect(bus.subscriptionCount == 0)
        #expect(
            state.closuresReleased == Self.owners, "\(Self.owners - state.closuresReleased) closures not yet released")
        print(
            "owner lifetimes, \(formatted(secondsSince(started))) s: \(Self.owners) owners released on \(Self.releasers) "
                + "threads while \(Self.dispatchers) threads dispatched \(dispatched.value) events; \(state.deliveries) deliveries, "
                + "0 after deinit: \(state.deliveriesAfterDeinit.isEmpty); deinits under lock: \(state.deinitsUnderLock); "
                + "closures released: \(state.closuresReleased)")
    }

    @Test("Owners released while the bus scans for dead owners are never deinitialized under its lock")
    func ownersReleasedDuringScans() {
        // The scan (purge, sweep, reclaim after a dispatch) must look at each owner through its weak
        // reference; the thread releasing an owner's last outside reference can race with that look,
        // making the scan's temporary reference the last one: the owner's deinit then runs on the
        // scanning thread, which must not be holding the bus lock at that moment.
        let count = 20_000
        let bus = EventBus()
        let book = Book(count: count)
        let probe = BusCallProbe()
        let started = DispatchTime.now()
        let releasing = Shared(2)
        let scans = Shared(0)
        let finished = concurrently(3, timeout: .seconds(120)) { thread in
            if thread < 2 {
                // Few live owners at a time, so that a scan often looks at the one being released.
                var ring: [Owner?] = Array(repeating: nil, count: 4)
                for id in stride(from: thread, to: count, by: 2) {
                    let owner = Owner(id: id, book: book, bus: bus, probe: probe)
                    bus.on(Beat.self).ofType("quiet").freeWith(owner).next { _, _ in book.delivered(to: id) }
                    ring[id / 2 % ring.count] = owner
                }
                releasing.withLock { $0 -= 1 }
            } else {
                var n = 0
                while releasing.value > 0 {
                    bus.purge()
                    n += 1
                }
                scans.withLock { $0 = n }
            }
        }
        #expect(finished, "threads did not finish in time")
        bus.purge()
        let state = book.state.value
        #expect(state.deinitFinished.allSatisfy { $0 })
        #expect(state.deinitsUnderLock == 0, "\(state.deinitsUnderLock) owner deinits ran under the bus lock")
        #expect(bus.subscriptionCount == 0)
        print(
            "owner scans, \(formatted(secondsSince(started))) s: \(count) owners made and released on 2 threads during "
                + "\(scans.value) purges; deinits under lock: \(state.deinitsUnderLock)")
    }

    @Test("A purge reclaims every dead subscription, whatever the key layout (found by the fuzzer)")
    func purgeReclaimsAcrossKeyLists() {
        // X is subscribed to ten keys; behind X's node in each key's list sits another dead
        // subscription. Reclaiming X unlinks its nodes from every list, including the heads of the
        // lists the scan has not reached yet: the scan must still walk the rest of those lists.
        let bus = EventBus()
        let released = Shared(0)
        var owner: Sentinel? = Sentinel()
        let keys = (0..<10).map { "k\($0)" }
        var everyKey = bus.on(Beat.self)
        for key in keys { everyKey = everyKey.ofType(key) }
        everyKey.freeWith(owner).next { _, _ in }
        for key in keys {
            let capture = DeinitAction { released.increment() }
            bus.on(Beat.self).ofType(key).freeWith(owner).next { _, _ in withExtendedLifetime(capture) {} }
        }
        let live = bus.on(Beat.self).ofType("k3").next { _ in }
        owner = nil
        #expect(bus.subscriptionCount == 12)
        bus.purge()
        #expect(bus.subscriptionCount == 1, "purge left \(bus.subscriptionCount - 1) dead subscriptions")
        #expect(released.value == keys.count)
        live.dispose()
    }

    @Test(
        "The bus never keeps an owner alive, even when its sweep runs in a dispatch nobody subscribes to (found by the fuzzer)"
    )
    func sweepNeverKeepsOwnersAlive() {
        struct Nobody: Event {}
        let bus = EventBus()
        let calls = Shared(0)
        var owner: Sentinel? = Sentinel()
        weak let weakOwner = owner
        bus.on(Beat.self).freeWith(owner).next { _, _ in calls.increment() }
        // More than two sweep intervals of dispatches to a type without subscribers: the sweeps
        // read (and so briefly retain) the live owner.
        for _ in 0..<(2 * bus.core.dispatchesPerSweepTurn + 10) { bus.dispatch(Nobody()) }
        owner = nil
        #expect(weakOwner == nil, "the bus still holds the owner its user released")
        bus.dispatch(Beat(n: 1))
        #expect(calls.value == 0, "a handler ran after its owner was released")
        #expect(bus.subscriptionCount == 0)
    }

    @Test("A dead owner's closure is released by the next dispatch that reaches it, else within the sweep interval")
    func releaseBound() {
        let bus = EventBus()
        let released = Shared(0)
        var owner: Sentinel? = Sentinel()
        for key in [nil, "quiet"] as [String?] {
            let capture = DeinitAction { released.increment() }
            var maker = bus.on(Beat.self)
            if let key { maker = maker.ofType(key) }
            maker.freeWith(owner).next { _, _ in withExtendedLifetime(capture) {} }
        }
        owner = nil
        #expect(released.value == 0)
        // Reaches the unkeyed subscription, which it reclaims; the "quiet" one is left to the sweep
        // (reclaiming every dead subscription of the type would be O(N) work in one dispatch).
        let turn = bus.core.dispatchesPerSweepTurn
        bus.dispatch(Beat(n: 1))
        #expect(released.value == 1)
        var dispatches = 1
        while released.value < 2, dispatches <= turn {
            bus.dispatch(Beat(n: 2))
            dispatches += 1
        }
        #expect(released.value == 2, "the sweep did not reach the keyed subscription within \(turn) dispatches")
        #expect(bus.subscriptionCount == 0)

        // A subscription no dispatch reaches: released by the amortised sweep.
        struct Unrelated: Event {}
        var other: Sentinel? = Sentinel()
        do {
            let capture = DeinitAction { released.increment() }
            bus.on(Beat.self).ofType("quiet").freeWith(other).next { _, _ in withExtendedLifetime(capture) {} }
        }
        other = nil
        bus.dispatch(Beat(n: 1))  // key nil: does not reach the "quiet" list
        var operations = 1
        let otherTurn = bus.core.dispatchesPerSweepTurn
        while released.value < 3, operations <= otherTurn {
            bus.dispatch(Unrelated())
            operations += 1
        }
        #expect(released.value == 3)
        #expect(operations <= otherTurn)
        print("release bound: reached at the next dispatch; unreached released after \(operations) bus operations")
    }
}
