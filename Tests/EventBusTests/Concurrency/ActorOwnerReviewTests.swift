import Dispatch
import Testing

@testable import EventBus

/// Probes of `isolated(to:)` beyond `ActorOwnerTests`: what a handler inherits from the dispatch
/// that happened to start its mailbox's drain, actors on other executors, and the bus going away
/// with deliveries enqueued.
@Suite("Actors as owners: review probes", .offThePool)
struct ActorOwnerReviewTests {
    struct Numbered: Event {
        let number: Int
    }

    enum Probe {
        @TaskLocal static var mark: Int?
    }

    actor Sink {
        let marks = Shared<[Int?]>([])
    }

    @Test("A handler does not run with the task-locals of the dispatch that started its drain")
    func noTaskLocalsInherited() async {
        let bus = EventBus()
        let sink = Sink()
        bus.on(Numbered.self).isolated(to: sink).next { sink, _ in
            sink.marks.withLock { $0.append(Probe.mark) }
        }
        // The first dispatch starts the drain; the second, with no mark, may be taken by a drain
        // the first one's task started. Neither handler may see the mark (a queue or main-actor
        // handler never does: the EventBusFoundation bridge's loop marks are task-locals, so an
        // inherited mark would silence the outbound bridge for an event the handler dispatches).
        Probe.$mark.withValue(7) { bus.dispatch(Numbered(number: 0)) }
        bus.dispatch(Numbered(number: 1))
        #expect(await waitUntil(timeout: actorTimeout) { sink.marks.value.count == 2 && bus.core.inFlight.count == 0 })
        #expect(sink.marks.value == [nil, nil])
    }

    /// An executor running its jobs on a serial dispatch queue.
    final class QueueExecutor: SerialExecutor {
        let queue = DispatchQueue(label: "ActorOwnerReviewTests.custom")

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedSerialExecutor()
            queue.async { job.runSynchronously(on: executor) }
        }
    }

    actor OnQueue {
        let executor = QueueExecutor()
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        var seen: [Int] = []
    }

    @Test("An actor with a custom executor: the handler runs on that executor, in order")
    func customExecutor() async {
        let bus = EventBus()
        let owner = OnQueue()
        let count = Shared(0)
        let queue = owner.executor.queue
        bus.on(Numbered.self).isolated(to: owner).next { owner, event in
            dispatchPrecondition(condition: .onQueue(queue))
            owner.seen.append(event.number)
            count.increment()
        }
        for number in 0..<100 { bus.dispatch(Numbered(number: number)) }
        #expect(await waitUntil(timeout: actorTimeout) { count.value == 100 })
        #expect(await owner.seen == Array(0..<100))
    }

    /// An actor on a queue of its own: its handler may wait (bounded) without holding a pool thread.
    actor QueueSink {
        static let executor = QueueActorExecutor(label: "ActorOwnerReviewTests.QueueSink")
        nonisolated var unownedExecutor: UnownedSerialExecutor { Self.executor.asUnownedSerialExecutor() }
    }

    @Test("The bus deallocated by a handler with deliveries enqueued behind it: none of them starts")
    func busGoneWithDeliveriesEnqueued() async {
        let received = Shared(0)
        let sink = QueueSink()
        let holder = Shared<EventBus?>(EventBus())
        let gone = WeakReference(holder.value!)
        let testLetGo = Shared(false)
        holder.value!.on(Numbered.self).isolated(to: sink).next { _, event in
            received.increment()
            guard event.number == 0 else { return }
            // The test's own reference (the one it dispatched with) must be gone first, or the
            // bus would outlive this handler and the deliveries below could run, rightly.
            guard waitUntil({ testLetGo.value }) else {
                Issue.record("the test kept its reference to the bus")
                return
            }
            let bus = holder.withLock { bus in bus.take()! }
            for number in 1..<100 { bus.dispatch(Numbered(number: number)) }
            // `bus` is released here, its last reference: the bus's deinit ends its subscriptions.
        }
        do {
            let bus = holder.value!
            bus.dispatch(Numbered(number: 0))
        }
        testLetGo.withLock { $0 = true }
        #expect(await waitUntil(timeout: actorTimeout) { gone.object == nil })
        // Give the drains that the 99 dispatches started time to run (they must run no handler).
        await suspend(milliseconds: 50)
        #expect(received.value == 1)
    }

    @Test("A main-actor chain node's maker bound to an actor: the handler runs on the actor, in post order")
    func mainActorChainNode() async {
        let node = MainActorEventNode(name: "list")
        let sink = Sink()
        let seen = Shared<[Int]>([])
        node.on(Numbered.self).isolated(to: sink).next { sink, event in
            sink.preconditionIsolated()
            seen.withLock { $0.append(event.number) }
        }
        await MainActor.run {
            for number in 0..<10 { node.post(Numbered(number: number)) }
        }
        #expect(await waitUntil(timeout: actorTimeout) { seen.value.count == 10 })
        #expect(seen.value == Array(0..<10))
    }
}
