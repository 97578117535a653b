import Dispatch
import Testing

@testable import EventBus

/// A replaying subscription that enqueues (a queue, an actor, the main actor off the main queue, a
/// stream) on a bus with a context propagator: the replay is delivered, before the live events, and
/// the bus stays usable, because nothing that enqueues runs under the bus's lock (capturing the
/// context there reads the propagator under that lock and calls user code: a debug build traps,
/// "re-entrant use of a bus lock", and a release build hangs every later call on the bus).
@Suite("Flow control: a replay enqueued with a context propagator set", .offThePool)
struct ReplayUnderPropagatorTests {
    struct Kept: Event {
        let value: Int
        let key: String
        var eventType: String? { key }
    }

    enum Request {
        @TaskLocal static var id: String?
    }

    actor Receiver {
        var values: [Int] = []
        var ids: [String?] = []
    }

    /// A bus with a propagator and both kinds of kept events: one `.latest`, one `.untilDelivered`.
    static func bus() -> EventBus {
        let bus = EventBus()
        bus.contextPropagator = TaskLocalContextPropagator(Request.$id)
        Request.$id.withValue("sticky") {
            bus.dispatch(Kept(value: 1, key: "latest"), sticky: .latest)
            bus.dispatch(Kept(value: 2, key: "once"), sticky: .untilDelivered)
        }
        return bus
    }

    @Test("atQueue(q).replayingSticky() off the main thread: the replay is delivered, with the subscriber's context")
    func queued() {
        let bus = Self.bus()
        let seen = Shared<[Int]>([])
        let ids = Shared<[String?]>([])
        let queue = DispatchQueue(label: "replay.queue")
        let subscribed = onAnotherThread {
            Request.$id.withValue("subscriber") {
                _ = bus.on(Kept.self).atQueue(queue).replayingSticky().next { event in
                    seen.withLock { $0.append(event.value) }
                    ids.withLock { $0.append(Request.id) }
                }
            }
        }
        #expect(subscribed, "the subscribe returned")
        #expect(waitUntil { seen.value.count == 2 })
        #expect(seen.value.sorted() == [1, 2])
        #expect(ids.value == ["subscriber", "subscriber"])
        // The bus still works: the `.untilDelivered` event was taken, a live event arrives.
        bus.dispatch(Kept(value: 3, key: "live"))
        #expect(waitUntil { seen.value.count == 3 })
        #expect(bus.stickyEvents(Kept.self, ofType: "latest").map(\.value) == [1])
        #expect(bus.stickyEvents(Kept.self, ofType: "once").isEmpty)
    }

    @Test("isolated(to:).replayingSticky() with a propagator: the replay reaches the actor")
    func isolated() async {
        let bus = Self.bus()
        let receiver = Receiver()
        let subscribed = await offThePool {
            bus.on(Kept.self).replayingSticky().isolated(to: receiver).next { receiver, event in
                receiver.values.append(event.value)
                receiver.ids.append(Request.id)
            }
        }
        #expect(!subscribed.isDisposed)
        #expect(await waitUntil(timeout: actorTimeout) { bus.enqueuedDeliveryCount == 0 })
        #expect(await receiver.values == [1, 2])
        #expect(await receiver.ids == [nil, nil], "a replay carries the subscribing thread's context")
        subscribed.dispose()
    }

    @Test("onMainActor().replayingSticky() subscribed off the main thread with a propagator")
    func mainActor() {
        guard MainQueue.probe() else { return }
        let bus = Self.bus()
        let seen = Shared<[Int]>([])
        let subscribed = onAnotherThread {
            _ = bus.on(Kept.self).onMainActor().replayingSticky().next { event in
                seen.withLock { $0.append(event.value) }
            }
        }
        #expect(subscribed)
        #expect(waitUntil { seen.value.count == 2 })
        #expect(seen.value == [1, 2])
    }

    @Test("A live event dispatched while a queued replay is enqueued runs after the replay")
    func replayBeforeLive() {
        for round in 0..<200 {
            let bus = EventBus()
            bus.dispatch(Kept(value: -1, key: "k"), sticky: .latest)
            let seen = Shared<[Int]>([])
            let queue = DispatchQueue(label: "replay.race.\(round)")
            let started = DispatchSemaphore(value: 0)
            let stop = Shared(false)
            Thread.detach {
                started.signal()
                var value = 0
                while !stop.value {
                    bus.dispatch(Kept(value: value, key: "k"))
                    value += 1
                }
            }
            started.wait()
            let token = bus.on(Kept.self).atQueue(queue).replayingSticky().next { event in
                seen.withLock { $0.append(event.value) }
            }
            stop.withLock { $0 = true }
            #expect(drain(queue))
            #expect(drain(queue))
            token.dispose()
            // The first delivery is the replayed one (the latest kept when it subscribed), and the
            // live ones follow in dispatch order.
            let values = seen.value
            #expect(values.first == -1, "round \(round): \(values.prefix(8))")
            let live = values.dropFirst()
            #expect(zip(live, live.dropFirst()).allSatisfy { $0 < $1 }, "round \(round): \(values.prefix(8))")
            if !zip(live, live.dropFirst()).allSatisfy({ $0 < $1 }) { break }
        }
    }
}

/// A replaying stream gets its replay before the live events that raced its subscription.
@Suite("Flow control: a replaying stream's replay comes first", .offThePool)
struct StreamReplayOrderTests {
    struct Count: Event {
        let value: Int
    }

    @Test(
        "A stream made with replayingSticky() while another thread dispatches: the kept event, then live ones in order")
    func replayFirst() async {
        for round in 0..<100 {
            let bus = EventBus()
            bus.dispatch(Count(value: -1), sticky: .latest)
            let stop = Shared(false)
            let started = DispatchSemaphore(value: 0)
            Thread.detach {
                started.signal()
                var value = 0
                while !stop.value {
                    bus.dispatch(Count(value: value))
                    value += 1
                }
            }
            await offThePool { started.wait() }
            var iterator = bus.on(Count.self).replayingSticky().events().makeAsyncIterator()
            var values: [Int] = []
            for _ in 0..<20 {
                guard let next = await iterator.next() else { break }
                values.append(next.value)
            }
            stop.withLock { $0 = true }
            #expect(values.first == -1, "round \(round): \(values)")
            let live = values.dropFirst()
            #expect(zip(live, live.dropFirst()).allSatisfy { $0 < $1 }, "round \(round): \(values)")
            if values.first != -1 { break }
        }
    }
}
