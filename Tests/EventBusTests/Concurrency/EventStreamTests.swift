import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

/// `bus.events(of:)` and `maker.events()`: what a stream yields, when its bus subscription ends,
/// and what its buffer does when the consumer falls behind.
@Suite("Event streams", .tags(.stress), .offThePool)
struct EventStreamTests {
    @Test("a stream yields every event dispatched after the call, in dispatch order, and nothing from before")
    func orderAndStart() async {
        let bus = EventBus()
        bus.dispatch(Conc.Tick(seq: -1))
        let consumer = Conc.consume(bus.events(of: Conc.Tick.self), limit: 1_000)
        for seq in 0..<1_000 { bus.dispatch(Conc.Tick(seq: seq)) }
        let seen = await AsyncWait.value { await consumer.value }
        #expect(seen?.map(\.seq) == Array(0..<1_000))
        // The consuming task holds the stream until it completes; then the subscription ends.
        #expect(await waitUntil { bus.subscriptionCount == 0 }, "the consumer stopped (break after the limit)")
    }

    @Test("events from 4 threads reach a stream exactly once each, in per-thread order")
    func fourThreadsInOrder() async {
        let bus = EventBus()
        let threads = 4
        let perThread = 2_500
        let consumer = Conc.consume(bus.events(of: Conc.Tick.self), limit: threads * perThread)
        let finished = await offThePool {
            concurrently(threads) { thread in
                for seq in 0..<perThread { bus.dispatch(Conc.Tick(thread: thread, seq: seq)) }
            }
        }
        #expect(finished)
        let seen = await AsyncWait.value { await consumer.value } ?? []
        #expect(seen.count == threads * perThread)
        var next = [Int](repeating: 0, count: threads)
        var outOfOrder = 0
        for tick in seen {
            if tick.seq != next[tick.thread] { outOfOrder += 1 }
            next[tick.thread] = tick.seq + 1
        }
        #expect(outOfOrder == 0)
        #expect(next == [Int](repeating: perThread, count: threads))
        #expect(await waitUntil { bus.subscriptionCount == 0 })
        print("Event stream: \(seen.count) events from \(threads) threads into 1 stream, \(outOfOrder) out of order")
    }

    @Test("cancelling the consuming task ends the subscription, even while the stream itself is still referenced")
    func terminationOnCancel() async {
        let bus = EventBus()
        let stream = bus.events(of: Conc.Tick.self)
        #expect(bus.subscriptionCount == 1)
        let received = Shared(0)
        let consumer = Conc.consume(stream) { _ in received.increment() }
        for seq in 0..<3 { bus.dispatch(Conc.Tick(seq: seq)) }
        #expect(await waitUntil { received.value == 3 })
        consumer.cancel()
        let seen = await AsyncWait.value { await consumer.value }
        #expect(seen?.count == 3)
        #expect(bus.subscriptionCount == 0)
        bus.dispatch(Conc.Tick(seq: 3))
        #expect(received.value == 3)
        withExtendedLifetime(stream) {}
    }

    @Test("breaking out of for-await ends the subscription")
    func terminationOnBreak() async {
        let bus = EventBus()
        let consumer = Task { () -> [Int] in
            var seen: [Int] = []
            for await tick in bus.events(of: Conc.Tick.self) {
                seen.append(tick.seq)
                if tick.seq == 2 { break }
            }
            return seen
        }
        #expect(await waitUntil { bus.subscriptionCount == 1 })
        for seq in 0..<6 { bus.dispatch(Conc.Tick(seq: seq)) }
        let seen = await AsyncWait.value { await consumer.value }
        #expect(seen == [0, 1, 2])
        #expect(bus.subscriptionCount == 0, "the loop's stream and iterator are gone, so is the subscription")
    }

    @Test("dropping a stream ends the subscription and releases what it buffered (weak sentinel, no leak)")
    func noLeakWhenDropped() {
        let bus = EventBus()
        weak var weakSentinel: Sentinel?
        do {
            let stream = bus.events(of: Conc.Carrier.self)
            let sentinel = Sentinel()
            weakSentinel = sentinel
            bus.dispatch(Conc.Carrier(payload: sentinel))
            #expect(bus.subscriptionCount == 1)
            withExtendedLifetime(stream) {}
        }
        #expect(bus.subscriptionCount == 0)
        #expect(weakSentinel == nil, "the bus no longer holds the stream's buffer")
    }

    @Test("an owner-bound stream finishes when its owner dies, at the next dispatch of its type")
    func ownerDeathAtNextDispatch() async {
        let bus = EventBus()
        var owner: Conc.Owner? = Conc.Owner()
        let consumer = Conc.consume(bus.on(Conc.Tick.self).freeWith(owner).events())
        bus.dispatch(Conc.Tick(seq: 0))
        bus.dispatch(Conc.Tick(seq: 1))
        owner = nil
        bus.dispatch(Conc.Tick(seq: 2))  // the bus notices the dead owner: not yielded, stream finishes
        // Only the stream's feed, which the bus held through the handler, can finish the stream:
        // its end proves the bus let go of the subscription and everything it captured.
        let seen = await AsyncWait.value { await consumer.value }
        #expect(seen?.map(\.seq) == [0, 1])
        #expect(bus.subscriptionCount == 0)
    }

    @Test("an owner-bound stream finishes when its owner dies, at purge() or after the periodic sweep")
    func ownerDeathAtPurgeAndSweep() async {
        let bus = EventBus()
        var first: Conc.Owner? = Conc.Owner()
        var second: Conc.Owner? = Conc.Owner()
        let purged = Conc.consume(bus.on(Conc.Tick.self).freeWith(first).events())
        let swept: Task<Int, Never> = {
            let stream = bus.on(Conc.Carrier.self).freeWith(second).events()
            bus.dispatch(Conc.Carrier(payload: Sentinel()))
            return Task { await stream.reduce(0) { count, _ in count + 1 } }
        }()
        first = nil
        bus.purge()
        #expect(await AsyncWait.value { await purged.value } == [])

        second = nil
        // No dispatch of Carrier: only other bus work, bounded by the sweep interval.
        for seq in 0..<bus.core.dispatchesPerSweepTurn { bus.dispatch(Conc.Tick(seq: seq)) }
        #expect(await AsyncWait.value { await swept.value } == 1, "the event from before, then the end")
        #expect(bus.subscriptionCount == 0)
    }

    @Test("subscribe(_:).events() on an EventSubscribing owner ends with the owner")
    func eventSubscribingStream() async {
        let bus = EventBus()
        var owner: Conc.Owner? = Conc.Owner()
        let consumer = Conc.consume(owner!.subscribe(Conc.Tick.self, on: bus).ofType("k").events())
        bus.dispatch(Conc.Tick(seq: 0, key: "k"))
        bus.dispatch(Conc.Tick(seq: 1, key: "other"))
        owner = nil
        bus.dispatch(Conc.Tick(seq: 2, key: "k"))
        let seen = await AsyncWait.value { await consumer.value }
        #expect(seen?.map(\.seq) == [0])
        #expect(bus.subscriptionCount == 0)
    }

    @Test("a stream bound to an owner that is already gone is finished from the start")
    func deadOwnerStream() async {
        let bus = EventBus()
        let owner: Conc.Owner? = nil
        let consumer = Conc.consume(bus.on(Conc.Tick.self).freeWith(owner).events())
        bus.dispatch(Conc.Tick(seq: 0))
        #expect(await AsyncWait.value { await consumer.value } == [])
        #expect(bus.subscriptionCount == 0)
    }

    @Test("a stream finishes when its bus is deallocated")
    func finishesWithBus() async {
        var bus: EventBus? = EventBus()
        weak var weakBus: EventBus?
        weakBus = bus
        let consumer = Conc.consume(bus!.events(of: Conc.Tick.self))
        bus!.dispatch(Conc.Tick(seq: 0))
        bus = nil
        #expect(weakBus == nil)
        #expect(await AsyncWait.value { await consumer.value }?.map(\.seq) == [0])
    }

    @Test("ofType keys filter a stream, as they filter handlers")
    func keyedStream() async {
        let bus = EventBus()
        let consumer = Conc.consume(bus.events(of: Conc.Tick.self, ofType: "a", "b"), limit: 3)
        for (seq, key) in [(0, "a"), (1, nil), (2, "c"), (3, "b"), (4, "a")] as [(Int, String?)] {
            bus.dispatch(Conc.Tick(seq: seq, key: key))
        }
        #expect(await AsyncWait.value { await consumer.value }?.map(\.seq) == [0, 3, 4])
        #expect(await waitUntil { bus.subscriptionCount == 0 })
    }

    @Test("the default buffering is unbounded: a consumer that falls behind gets every event later, in order")
    func defaultBufferingKeepsEverything() async {
        let bus = EventBus()
        let stream = bus.events(of: Conc.Tick.self)
        // The consumer has not started: dispatch never waits for it, the stream holds the backlog.
        for seq in 0..<10_000 { bus.dispatch(Conc.Tick(seq: seq)) }
        let consumer = Conc.consume(consume stream, limit: 10_000)
        let seen = await AsyncWait.value { await consumer.value }
        #expect(seen?.map(\.seq) == Array(0..<10_000))
        #expect(await waitUntil { bus.subscriptionCount == 0 })
        print(
            "Event stream buffering: 10000 events dispatched before the consumer started, \(seen?.count ?? 0) received in order"
        )
    }

    @Test("bufferingNewest(n) gives a slow consumer the newest n events; bufferingOldest(n) the oldest n")
    func boundedBuffering() async {
        let bus = EventBus()
        let newest = bus.events(of: Conc.Tick.self, buffering: .bufferingNewest(3))
        let oldest = bus.events(of: Conc.Tick.self, buffering: .bufferingOldest(3))
        for seq in 0..<100 { bus.dispatch(Conc.Tick(seq: seq)) }
        // `consume`: the test lets go of the streams, so each subscription ends with its consumer.
        let newestConsumer = Conc.consume(consume newest, limit: 3)
        let oldestConsumer = Conc.consume(consume oldest, limit: 3)
        #expect(await AsyncWait.value { await newestConsumer.value }?.map(\.seq) == [97, 98, 99])
        #expect(await AsyncWait.value { await oldestConsumer.value }?.map(\.seq) == [0, 1, 2])
        #expect(await waitUntil { bus.subscriptionCount == 0 })
    }

    @Test("a stream consumed on the main actor sees events dispatched from background threads")
    @MainActor
    func consumedOnMainActor() async {
        let bus = EventBus()
        let stream = bus.events(of: Conc.Tick.self)
        let dispatcher = Task.detached {
            for seq in 0..<100 { bus.dispatch(Conc.Tick(seq: seq)) }
        }
        let seen = await AsyncWait.value { @MainActor () -> [Int] in
            var seen: [Int] = []
            for await tick in stream {
                #expect(isOnMainQueue)
                seen.append(tick.seq)
                if seen.count == 100 { break }
            }
            return seen
        }
        #expect(await AsyncWait.value { await dispatcher.value } != nil)
        #expect(seen == Array(0..<100))
    }
}
