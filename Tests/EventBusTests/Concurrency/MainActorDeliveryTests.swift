import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

/// `onMainActor()` subscribers: where and when they run, in what order, and what dispose means for
/// deliveries already enqueued on the main queue. See `MainQueue` for how the main queue is
/// serviced under `swift test` on Linux.
@Suite("Main-actor subscribers", .tags(.stress), .offThePool)
struct MainActorDeliveryTests {
    @Test("the main queue is serviced during the tests, and its blocks count as on the main actor")
    func mainQueueIsServiced() {
        #expect(MainQueue.probe())
    }

    @Test("a dispatch on the main actor calls a main-actor handler before dispatch returns")
    @MainActor
    func synchronousOnMainActor() {
        let bus = EventBus()
        let model = Conc.ViewModel()
        let token = bus.on(Conc.Renamed.self).onMainActor().next { event in
            model.titles.append(event.name)
        }
        #expect(isOnMainQueue)
        bus.dispatch(Conc.Renamed(name: "a"))
        #expect(model.titles == ["a"])
        bus.dispatch(Conc.Renamed(name: "b"))
        #expect(model.titles == ["a", "b"])
        token.dispose()
        bus.dispatch(Conc.Renamed(name: "c"))
        #expect(model.titles == ["a", "b"])
        #expect(bus.subscriptionCount == 0)
    }

    @Test("the owner-passing form hands a @MainActor owner to the handler, synchronously on the main actor")
    @MainActor
    func ownerPassingOnMainActor() {
        let bus = EventBus()
        let model = Conc.ViewModel()
        model.subscribe(Conc.Renamed.self, on: bus).onMainActor().next { owner, event in
            owner.title = event.name
        }
        bus.dispatch(Conc.Renamed(name: "Ada"))
        #expect(model.title == "Ada")
        #expect(bus.subscriptionCount == 1)
    }

    @Test("a dispatch from a background thread is enqueued to the main queue, not run on the dispatching thread")
    func backgroundDispatchIsEnqueued() {
        let bus = EventBus()
        let calls = Shared(0)
        let offMain = Shared(0)
        _ = bus.on(Conc.Tick.self).onMainActor().next { _ in
            if !isOnMainQueue { offMain.increment() }
            calls.increment()
        }
        // Hold the main queue: a handler run inline on the dispatching thread would be seen now.
        let gate = MainQueue.block()
        let dispatched = onAnotherThread {
            bus.dispatch(Conc.Tick(seq: 0))
            bus.dispatch(Conc.Tick(seq: 1))
        }
        #expect(dispatched)
        #expect(calls.value == 0, "the handler must not run on the background thread")
        #expect(gate.open())
        #expect(calls.value == 2)
        #expect(offMain.value == 0)
    }

    @Test("10,000 events from 4 threads reach a main-actor subscriber exactly once each, in per-thread order")
    func fourThreadsInOrder() {
        let bus = EventBus()
        let threads = 4
        let perThread = 2_500
        let log = MainQueue.run { Conc.Log<Conc.Tick>() }!
        _ = bus.on(Conc.Tick.self).onMainActor().next { tick in log.record(tick) }
        let finished = concurrently(threads) { thread in
            for seq in 0..<perThread { bus.dispatch(Conc.Tick(thread: thread, seq: seq)) }
        }
        #expect(finished)
        #expect(MainQueue.drain())
        let (entries, offMain) = MainQueue.run { (log.entries, log.offMainQueue) }!
        #expect(entries.count == threads * perThread)
        #expect(offMain == 0, "every delivery ran on the main queue")
        var next = [Int](repeating: 0, count: threads)
        var outOfOrder = 0
        for tick in entries {
            if tick.seq != next[tick.thread] { outOfOrder += 1 }
            next[tick.thread] = tick.seq + 1
        }
        #expect(outOfOrder == 0)
        #expect(next == [Int](repeating: perThread, count: threads), "each event exactly once")
        print(
            "Main-actor delivery: \(entries.count) events from \(threads) threads, 1 main-actor subscriber, \(outOfOrder) out of order"
        )
    }

    @Test("disposing on the main actor while deliveries are enqueued: none of them runs afterwards")
    func disposeWhileEnqueued() {
        let bus = EventBus()
        let disposedCalls = Shared(0)
        let controlCalls = Shared(0)
        let token = bus.on(Conc.Tick.self).onMainActor().next { _ in disposedCalls.increment() }
        _ = bus.on(Conc.Tick.self).onMainActor().next { _ in controlCalls.increment() }
        let events = 1_000
        let done = MainQueue.run { () -> Bool in
            // On the main actor, with the main queue busy: the background dispatches enqueue
            // their deliveries behind this block.
            let dispatched = onAnotherThread {
                for seq in 0..<events { bus.dispatch(Conc.Tick(seq: seq)) }
            }
            token.dispose()
            return dispatched
        }
        #expect(done == true)
        #expect(MainQueue.drain())
        #expect(controlCalls.value == events, "the deliveries were enqueued and ran after the dispose")
        #expect(disposedCalls.value == 0, "no enqueued delivery to the disposed subscription ran")
        print("Main-actor dispose: \(events) deliveries enqueued before dispose, \(disposedCalls.value) ran after it")
    }

    @Test("a main-actor handler disposing another subscription mid-stream stops its enqueued deliveries at once")
    func disposeFromHandlerWhileEnqueued() {
        let bus = EventBus()
        let received = Shared<[Int]>([])
        let victim = Shared<EventToken?>(nil)
        // Subscribed first, so for each event it runs before the victim.
        _ = bus.on(Conc.Tick.self).onMainActor().next { tick in
            if tick.seq == 500 { victim.value?.dispose() }
        }
        let victimToken = bus.on(Conc.Tick.self).onMainActor().next { tick in
            received.withLock { $0.append(tick.seq) }
        }
        victim.withLock { $0 = victimToken }
        let gate = MainQueue.block()
        #expect(
            onAnotherThread {
                for seq in 0..<1_000 { bus.dispatch(Conc.Tick(seq: seq)) }
            })
        #expect(gate.open())
        let got = received.value
        let exact = got == Array(0..<500)
        #expect(
            exact,
            "the disposed subscriber got \(got.count) events (\(got.first ?? -1)…\(got.last ?? -1)), expected exactly 0…499"
        )
        #expect(bus.subscriptionCount == 1)
    }

    @Test("an enqueued delivery does not run once its owner is gone")
    func ownerDiesWhileEnqueued() {
        let bus = EventBus()
        let calls = Shared(0)
        weak var weakModel: Conc.ViewModel?
        let gate: MainQueueGate = {
            let model = Conc.ViewModel()
            weakModel = model
            model.subscribe(Conc.Tick.self, on: bus).onMainActor().next { owner, _ in
                owner.titles.append("called")
                calls.increment()
            }
            let gate = MainQueue.block()
            #expect(
                onAnotherThread {
                    for seq in 0..<100 { bus.dispatch(Conc.Tick(seq: seq)) }
                })
            return gate
        }()
        // The model's last strong reference is gone: the enqueued deliveries find no owner.
        #expect(weakModel == nil)
        #expect(gate.open())
        #expect(calls.value == 0)
        bus.purge()
        #expect(bus.subscriptionCount == 0)
    }

    @Test("a dead owner's main-actor subscription is never called and is reclaimed at the next dispatch")
    func deadOwnerReclaimed() {
        let bus = EventBus()
        let calls = Shared(0)
        do {
            let model = Conc.ViewModel()
            model.subscribe(Conc.Tick.self, on: bus).onMainActor().next { _, _ in calls.increment() }
            #expect(bus.subscriptionCount == 1)
        }
        #expect(MainQueue.run { bus.dispatch(Conc.Tick(seq: 0)) } != nil)  // synchronous path
        #expect(bus.subscriptionCount == 0)
        #expect(calls.value == 0)
    }

    @Test("a background dispatch never reads a main-actor owner; the main queue finds it dead and reclaims it")
    func deadOwnerReclaimedFromBackground() {
        let bus = EventBus()
        let calls = Shared(0)
        do {
            let model = Conc.ViewModel()
            model.subscribe(Conc.Tick.self, on: bus).onMainActor().next { _, _ in calls.increment() }
        }
        let gate = MainQueue.block()
        #expect(onAnotherThread { bus.dispatch(Conc.Tick(seq: 0)) })
        // Still behind the gate: the dispatching thread did not look at the owner (retaining it
        // there could run a view controller's deinit off the main thread), so nothing is reclaimed.
        #expect(bus.subscriptionCount == 1)
        #expect(gate.open())
        #expect(waitUntil { bus.subscriptionCount == 0 }, "reclaimed by the delivery on the main queue")
        #expect(calls.value == 0)
    }

    @Test("freeWith an owner that is already gone gives an inert, disposed token")
    func inertForDeadOwner() {
        let bus = EventBus()
        let owner: Conc.Owner? = nil
        let token = bus.on(Conc.Tick.self).onMainActor().freeWith(owner).next { _, _ in }
        #expect(token.isDisposed)
        #expect(token.id == 0)
        #expect(bus.subscriptionCount == 0)
    }

    @Test("ofType chains on onMainActor(): keyed main-actor subscribers get only their keys, before unkeyed ones")
    func keyedMainActor() {
        let bus = EventBus()
        let received = Shared<[String]>([])
        _ = bus.on(Conc.Tick.self).onMainActor().next { tick in received.append("any:\(tick.seq)") }
        let token = bus.on(Conc.Tick.self).ofType("a").onMainActor().ofType("b").next { tick in
            received.append("\(tick.key ?? "-"):\(tick.seq)")
        }
        #expect(
            onAnotherThread {
                bus.dispatch(Conc.Tick(seq: 0, key: "a"))
                bus.dispatch(Conc.Tick(seq: 1, key: "c"))
                bus.dispatch(Conc.Tick(seq: 2, key: "b"))
                bus.dispatch(Conc.Tick(seq: 3))
            })
        #expect(MainQueue.drain())
        #expect(received.value == ["a:0", "any:0", "any:1", "b:2", "any:2", "any:3"])
        token.dispose()
        #expect(bus.subscriptionCount == 1)
    }

    @Test("disposing a main-actor subscription releases its handler and captures (weak sentinel)")
    func noLeakAfterDispose() {
        let bus = EventBus()
        weak var weakSentinel: Sentinel?
        let token: EventToken = {
            let sentinel = Sentinel()
            weakSentinel = sentinel
            return bus.on(Conc.Tick.self).onMainActor().next { _ in withExtendedLifetime(sentinel) {} }
        }()
        #expect(onAnotherThread { bus.dispatch(Conc.Tick(seq: 0)) })
        token.dispose()
        // A delivery already enqueued keeps its own reference until the main queue has run it.
        #expect(MainQueue.drain())
        #expect(weakSentinel == nil)
        #expect(bus.subscriptionCount == 0)
    }
}
