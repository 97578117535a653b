import Dispatch
import Testing

@testable import EventBus

/// `isolated(to:)`: an actor as owner. Its handler runs on the actor, one event at a time in
/// dispatch order, never after the token is disposed or the actor is gone.
@Suite("Actors as owners", .offThePool)
struct ActorOwnerTests {
    struct Numbered: Event {
        let thread: Int
        let number: Int
    }

    struct Keyed: Event {
        let room: String
        var eventType: String? { room }
    }

    /// Records the events it receives; `received` counts them where a test can wait without `await`.
    actor Recorder {
        var seen: [Numbered] = []
        var keys: [String] = []
        let received = Shared(0)
        /// Set (on the actor) once `dispose()` has returned there.
        var disposeReturned = false
        var late = 0

        func start(on bus: EventBus) -> EventToken {
            bus.on(Numbered.self).isolated(to: self).next { recorder, event in
                recorder.preconditionIsolated()
                if recorder.disposeReturned { recorder.late += 1 }
                recorder.seen.append(event)
                recorder.received.increment()
            }
        }

        /// Disposes `token` on the actor: no handler of its can be running meanwhile, so any that
        /// starts later is a broken dispose guarantee.
        func dispose(_ token: EventToken) {
            token.dispose()
            disposeReturned = true
        }
    }

    /// An actor that runs on a queue of its own (``QueueActorExecutor``), not on the cooperative
    /// pool: the tests of the dispose and lifetime guarantees use it, so that the handler's batch
    /// and every hop of the test onto the actor need no pool thread. (The drain that reaches it
    /// still starts as a task on the pool: `PoolProbeTests` measures that.)
    actor OwnQueueRecorder {
        static let executor = QueueActorExecutor(label: "ActorOwnerTests.OwnQueueRecorder")
        nonisolated var unownedExecutor: UnownedSerialExecutor { Self.executor.asUnownedSerialExecutor() }
        let received = Shared(0)
        /// Handlers that found themselves off the actor's queue (0 unless isolation broke).
        let offQueue = Shared(0)

        func checkQueue() { if !Self.executor.isCurrent { offQueue.increment() } }
    }

    /// How many of `seen` did not come right after the previous event of their thread (0 when each
    /// of `threads` threads' `each` events arrived once, in order).
    static func outOfOrder(_ seen: [Numbered], threads: Int, each: Int) -> Int {
        var next = Array(repeating: 0, count: threads)
        var wrong = 0
        for event in seen {
            if event.number != next[event.thread] { wrong += 1 }
            next[event.thread] = event.number + 1
        }
        return wrong + next.filter { $0 != each }.count
    }

    @Test("The handler runs on the actor, in dispatch order, and sees its state with no await")
    func ordersOneThread() async {
        let bus = EventBus()
        let recorder = Recorder()
        _ = await recorder.start(on: bus)
        for number in 0..<10_000 { bus.dispatch(Numbered(thread: 0, number: number)) }
        #expect(await waitUntil(timeout: actorTimeout) { recorder.received.value == 10_000 })
        #expect(Self.outOfOrder(await recorder.seen, threads: 1, each: 10_000) == 0)
        print("actor owner: 10,000 events from one thread arrived in order")
    }

    @Test("FIFO per subscription under 4 dispatching threads", .tags(.stress))
    func fifoUnderFourThreads() async {
        let bus = EventBus()
        let recorders = [Recorder(), Recorder()]
        for recorder in recorders { _ = await recorder.start(on: bus) }
        let perThread = 5_000
        let finished = await offThePool {
            concurrently(4) { thread in
                for number in 0..<perThread { bus.dispatch(Numbered(thread: thread, number: number)) }
            }
        }
        #expect(finished)
        for recorder in recorders {
            #expect(await waitUntil(timeout: actorTimeout) { recorder.received.value == 4 * perThread })
            #expect(Self.outOfOrder(await recorder.seen, threads: 4, each: perThread) == 0)
        }
        print("actor owner: 2 subscriptions × 4 threads × \(perThread) events, each thread's order kept")
    }

    @Test("A later dispatch on the same thread never overtakes an earlier one, whatever the task priorities")
    func priorityDoesNotReorder() async {
        let bus = EventBus()
        let recorder = Recorder()
        _ = await recorder.start(on: bus)
        await withTaskGroup(of: Void.self) { group in
            for (index, priority) in [TaskPriority.background, .high, .low, .userInitiated].enumerated() {
                group.addTask(priority: priority) {
                    for number in 0..<2_000 { bus.dispatch(Numbered(thread: index, number: number)) }
                }
            }
        }
        #expect(await waitUntil(timeout: actorTimeout) { recorder.received.value == 8_000 })
        #expect(Self.outOfOrder(await recorder.seen, threads: 4, each: 2_000) == 0)
    }

    @Test("Disposed on the actor while deliveries are enqueued: none of them starts", .tags(.stress))
    func disposeRacingDeliveries() async {
        let bus = EventBus()
        var late = 0
        var delivered = 0
        for round in 0..<50 {
            let recorder = Recorder()
            let token = await recorder.start(on: bus)
            let dispatcher = Task.detached {
                for number in 0..<200 { bus.dispatch(Numbered(thread: round, number: number)) }
            }
            await Task.yield()
            await recorder.dispose(token)
            await dispatcher.value
            try? await Task.sleep(nanoseconds: 1_000_000)
            late += await recorder.late
            delivered += recorder.received.value
        }
        #expect(late == 0)
        #expect(bus.subscriptionCount == 0)
        print("actor owner: 50 disposals racing 200 dispatches each, \(delivered) delivered, \(late) late")
    }

    @Test("Disposed while its actor runs a handler: the deliveries enqueued behind it never start")
    func disposeDropsEnqueued() async {
        let bus = EventBus()
        let recorder = OwnQueueRecorder()
        let token = Shared<EventToken?>(nil)
        token.withLock { slot in
            slot = bus.on(Numbered.self).isolated(to: recorder).next { recorder, event in
                recorder.checkQueue()
                recorder.received.increment()
                guard event.number == 0 else { return }
                // Enqueued behind this delivery, on the same actor: then disposed before any runs.
                for number in 1..<100 { bus.dispatch(Numbered(thread: 0, number: number)) }
                token.value?.dispose()
            }
        }
        bus.dispatch(Numbered(thread: 0, number: 0))
        #expect(await waitUntil(timeout: actorTimeout) { recorder.received.value == 1 && bus.core.inFlight.count == 0 })
        #expect(recorder.received.value == 1)
        #expect(recorder.offQueue.value == 0)
    }

    @Test("The actor deallocated with deliveries enqueued: none starts, and the subscription is reclaimed")
    func actorDeathDropsEnqueued() async {
        let bus = EventBus()
        let received = Shared(0)
        let holder = Shared<OwnQueueRecorder?>(OwnQueueRecorder())
        let gone = WeakReference(holder.value!)
        let offQueue = Shared(0)
        bus.on(Numbered.self).isolated(to: holder.value!).next { _, event in
            if !OwnQueueRecorder.executor.isCurrent { offQueue.increment() }
            received.increment()
            guard event.number == 0 else { return }
            for number in 1..<100 { bus.dispatch(Numbered(thread: 0, number: number)) }
            holder.withLock { $0 = nil }  // the last reference but the one this delivery runs with
        }
        bus.dispatch(Numbered(thread: 0, number: 0))
        #expect(await waitUntil(timeout: actorTimeout) { gone.object == nil && bus.core.inFlight.count == 0 })
        #expect(received.value == 1)
        #expect(offQueue.value == 0)
        #expect(await waitUntil(timeout: actorTimeout) { bus.subscriptionCount == 0 })
    }

    @Test("An owner gone before `next`: an inert token, nothing registered")
    func ownerGoneBeforeNext() {
        let bus = EventBus()
        var recorder: Recorder? = Recorder()
        let maker = bus.on(Numbered.self).isolated(to: recorder!)
        recorder = nil
        let token = maker.next { _, _ in Issue.record("called") }
        #expect(token.isDisposed)
        #expect(bus.subscriptionCount == 0)
    }

    /// Runs on a queue of its own, as ``OwnQueueRecorder`` does.
    actor Relay {
        static let executor = QueueActorExecutor(label: "ActorOwnerTests.Relay")
        nonisolated var unownedExecutor: UnownedSerialExecutor { Self.executor.asUnownedSerialExecutor() }
        var log: [String] = []
        func start(on bus: EventBus) -> EventToken {
            bus.on(Numbered.self).isolated(to: self).next { relay, event in
                relay.log.append("numbered \(event.number)" + (Relay.executor.isCurrent ? "" : " off its queue"))
                if event.number < 3 { bus.dispatch(Numbered(thread: 0, number: event.number + 1)) }
            }
        }
    }

    @Test("A handler that dispatches to its own subscription: the new event runs after it, on the actor")
    func reentrancy() async {
        let bus = EventBus()
        let relay = Relay()
        let token = await relay.start(on: bus)
        bus.dispatch(Numbered(thread: 0, number: 0))
        #expect(await waitUntil(timeout: actorTimeout) { bus.core.inFlight.count == 0 })
        #expect(await relay.log == ["numbered 0", "numbered 1", "numbered 2", "numbered 3"])
        // The handler captures the bus: a cycle that ends with the subscription (here; or, with the
        // actor gone, at the bus's next operation that reaches it). LeakSanitizer checks.
        token.dispose()
    }

    actor Tally: EventSubscribing {
        var rooms: [String] = []
        var errors = 0
        struct Refused: Error {}

        func start(on bus: EventBus) {
            subscribe(Keyed.self, on: bus).ofType("room-7").priority(.high).next { tally, event in
                tally.rooms.append(event.room)
            }
            subscribe(Keyed.self, on: bus).ofType("room-9").next { _, _ throws in throw Refused() }
        }
    }

    @Test("Composes: `subscribe` inside an actor, keys, priority, throwing handlers, introspection")
    func composes() async {
        let bus = EventBus()
        let errors = Shared(0)
        bus.handlerErrorHandler = { _ in errors.increment() }
        let tally = Tally()
        await tally.start(on: bus)
        for room in ["room-7", "room-9", "room-8", "room-7"] { bus.dispatch(Keyed(room: room)) }
        #expect(await waitUntil(timeout: actorTimeout) { bus.core.inFlight.count == 0 && errors.value == 1 })
        #expect(await tally.rooms == ["room-7", "room-7"])
        let deliveries = bus.subscriptions.map(\.delivery.description)
        #expect(deliveries == Array(repeating: "actor EventBusTests.ActorOwnerTests.Tally", count: 2))
        #expect(bus.subscriptions.first?.description.contains("owner EventBusTests.ActorOwnerTests.Tally") == true)
    }

    @Test("The tracer counts an actor delivery as enqueued; a dead-event hook does not see it")
    func tracerAndDeadEvents() async {
        let bus = EventBus()
        let records = Shared<[String]>([])
        let dead = Shared(0)
        bus.tracer = { record in records.append("\(record)") }
        bus.deadEventHandler = { _ in dead.increment() }
        let recorder = Recorder()
        _ = await recorder.start(on: bus)
        bus.dispatch(Numbered(thread: 0, number: 0))
        #expect(await waitUntil(timeout: actorTimeout) { recorder.received.value == 1 })
        let dispatched = records.value.filter { $0.hasPrefix("dispatched") }
        #expect(dispatched.count == 1)
        #expect(dispatched.first?.hasSuffix("0 delivered, 1 enqueued") == true, "\(dispatched)")
        #expect(dead.value == 0)
    }

    @Test("Sticky: a replay is enqueued on the actor before live events; .untilDelivered counts at delivery")
    func sticky() async {
        let bus = EventBus()
        bus.dispatch(Numbered(thread: 0, number: 0), sticky: .untilDelivered)
        let recorder = Recorder()
        bus.on(Numbered.self).replayingSticky().isolated(to: recorder).next { recorder, event in
            recorder.seen.append(event)
            recorder.received.increment()
        }
        bus.dispatch(Numbered(thread: 0, number: 1))
        #expect(await waitUntil(timeout: actorTimeout) { recorder.received.value == 2 })
        #expect(await recorder.seen.map(\.number) == [0, 1])
        // Received by the actor's handler: no longer kept.
        #expect(await waitUntil(timeout: actorTimeout) { bus.stickyEvents(Numbered.self).isEmpty })
    }

    @Test("A handler on a chain node's actor owner gets the events the node receives")
    func chains() async {
        let root = EventNode(name: "root")
        let child = EventNode(name: "child")
        #expect(child.mount(on: root))
        let recorder = Recorder()
        root.on(Numbered.self).isolated(to: recorder).next { recorder, event in
            recorder.seen.append(event)
            recorder.received.increment()
        }
        child.post(Numbered(thread: 0, number: 1))
        child.post(Numbered(thread: 0, number: 2))
        #expect(await waitUntil(timeout: actorTimeout) { recorder.received.value == 2 })
        #expect(await recorder.seen.map(\.number) == [1, 2])
    }

    @Test("10,000 actors × 10 subscriptions: delivered by key, released with their actors", .tags(.stress))
    func manyActorsReleased() async {
        let bus = EventBus()
        var recorders: [Recorder]? = (0..<10_000).map { _ in Recorder() }
        await offThePool { [recorders] in
            for (index, recorder) in recorders!.enumerated() {
                for _ in 0..<10 {
                    bus.on(Keyed.self).ofType("\(index)").isolated(to: recorder).next { recorder, _ in
                        recorder.received.increment()
                    }
                }
            }
        }
        #expect(bus.subscriptionCount == 100_000)
        // The first 100 actors' keys: 1,000 deliveries, each actor's 10 on it (a dispatch to all
        // 100,000 would start 100,000 drains: a flood of the cooperative pool that other suites
        // running at the same time would wait behind).
        for index in 0..<100 { bus.dispatch(Keyed(room: "\(index)")) }
        let counters = recorders!.map(\.received)
        #expect(await waitUntil(timeout: actorTimeout) { bus.core.inFlight.count == 0 })
        #expect(counters.prefix(100).allSatisfy { $0.value == 10 })
        #expect(counters.dropFirst(100).allSatisfy { $0.value == 0 })
        let weak = recorders!.map(WeakReference.init)
        recorders = nil
        #expect(await waitUntil(timeout: actorTimeout) { weak.allSatisfy { $0.object == nil } })
        bus.purge()
        #expect(bus.subscriptionCount == 0)
        print("actor owner: 10,000 actors × 10 subscriptions, 1,000 deliveries by key, all released")
    }
}
