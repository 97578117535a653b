import Dispatch
import Testing

@testable import EventBus

/// One mailbox per (actor, bus) and per (queue, bus), shared by their
/// subscriptions, in dispatch order; a drain runs a bounded batch and leaves the actor; it runs at
/// the priority of the highest delivery waiting.
@Suite("Flow control: order across an actor's subscriptions, bounded batches, priority", .offThePool)
struct MailboxOrderTests {
    struct Tick: Event {
        let number: Int
    }

    actor Log {
        var entries: [String] = []
        var handled = 0
        var handledWhenCalled: Int?
        var priorities: [TaskPriority] = []
        let count = Shared(0)

        func mark() { handledWhenCalled = handled }
    }

    @Test(
        "Two subscriptions of one actor, one .high: every dispatch's deliveries in the bus's order, dispatches in order"
    )
    func oneActorTwoSubscriptions() async {
        let bus = EventBus()
        let log = Log()
        let total = 2_000
        let tokens = [
            bus.on(Tick.self).isolated(to: log).next { log, tick in
                log.entries.append("n\(tick.number)")
                log.count.increment()
            },
            bus.on(Tick.self).priority(.high).isolated(to: log).next { log, tick in
                log.entries.append("h\(tick.number)")
                log.count.increment()
            },
        ]
        await offThePool { for number in 0..<total { bus.dispatch(Tick(number: number)) } }
        #expect(await waitUntil(timeout: actorTimeout) { log.count.value == 2 * total })
        let expected = (0..<total).flatMap { ["h\($0)", "n\($0)"] }
        let entries = await log.entries
        let firstWrong = Array(zip(entries, expected)).firstIndex { $0 != $1 }
        #expect(entries == expected, "first out of order at \(firstWrong.map(String.init) ?? "-")")
        for token in tokens { token.dispose() }
    }

    @Test("Two subscriptions on one serial queue and a main-queue pair keep dispatch order across them")
    func queueSharedAcrossSubscriptions() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "order.shared")
        let seen = Shared<[String]>([])
        let tokens = [
            bus.on(Tick.self).atQueue(queue).next { tick in seen.withLock { $0.append("a\(tick.number)") } },
            bus.on(Tick.self).atQueue(queue).next { tick in seen.withLock { $0.append("b\(tick.number)") } },
        ]
        concurrently(1) { _ in for number in 0..<1_000 { bus.dispatch(Tick(number: number)) } }
        #expect(waitUntil { seen.value.count == 2_000 })
        #expect(seen.value == (0..<1_000).flatMap { ["a\($0)", "b\($0)"] })
        for token in tokens { token.dispose() }
    }

    /// An executor on a queue a test can suspend: deliveries then wait for the actor without any
    /// thread blocked (the drain's task waits to hop onto it). Kept in a `static let`: the runtime
    /// refers to an actor's executor unowned.
    final class SuspendableExecutor: SerialExecutor {
        let queue: DispatchQueue

        init(label: String) {
            queue = DispatchQueue(label: label)
        }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedSerialExecutor()
            queue.async { job.runSynchronously(on: executor) }
        }

        func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
    }

    /// An actor on a ``SuspendableExecutor``.
    actor HeldLog {
        static let batchExecutor = SuspendableExecutor(label: "MailboxOrderTests.batch")
        static let priorityExecutor = SuspendableExecutor(label: "MailboxOrderTests.priority")
        let executor: SuspendableExecutor
        var handled = 0
        var handledWhenCalled: Int?
        var priorities: [TaskPriority] = []
        let count = Shared(0)

        init(on executor: SuspendableExecutor) {
            self.executor = executor
        }

        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        func mark() { handledWhenCalled = handled }
    }

    @Test(
        "A drain leaves the actor after a bounded batch: an actor method called during a flood runs before the flood ends"
    )
    func boundedBatch() async {
        let bus = EventBus()
        let log = HeldLog(on: HeldLog.batchExecutor)
        let total = 20_000
        let token = bus.on(Tick.self).isolated(to: log).next { log, _ in
            log.handled += 1
            log.count.increment()
        }
        // The actor's queue is held: the drain's task waits to hop onto it, then the method's call.
        HeldLog.batchExecutor.queue.suspend()
        await offThePool { for number in 0..<total { bus.dispatch(Tick(number: number)) } }
        await offThePool { usleepMilliseconds(50) }  // the drain's task reaches the actor's queue first
        let marked = Task.detached { await log.mark() }
        await offThePool { usleepMilliseconds(50) }
        HeldLog.batchExecutor.queue.resume()
        await marked.value
        #expect(await waitUntil(timeout: actorTimeout) { log.count.value == total })
        let handledWhenCalled = await log.handledWhenCalled ?? total
        print("bounded batch: an actor method called during a flood of \(total) ran after \(handledWhenCalled)")
        #expect(handledWhenCalled < total / 2, "the method waited for \(handledWhenCalled) of \(total) deliveries")
        token.dispose()
    }

    @Test("A .high delivery behind .background ones runs at .high or above")
    func drainPriority() async {
        let bus = EventBus()
        let log = HeldLog(on: HeldLog.priorityExecutor)
        let token = bus.on(Tick.self).isolated(to: log).next { log, _ in
            log.priorities.append(Task.currentPriority)
            log.count.increment()
        }
        HeldLog.priorityExecutor.queue.suspend()
        await Task.detached(priority: .background) { bus.dispatch(Tick(number: 0)) }.value
        await Task.detached(priority: .background) { bus.dispatch(Tick(number: 1)) }.value
        await Task.detached(priority: .high) { bus.dispatch(Tick(number: 2)) }.value
        HeldLog.priorityExecutor.queue.resume()
        #expect(await waitUntil(timeout: actorTimeout) { log.count.value == 3 })
        let priorities = await log.priorities
        print("drain priority: deliveries ran at \(priorities.map(\.rawValue))")
        #expect(priorities.last.map { $0 >= .high } == true, "the .high delivery ran at \(priorities)")
        token.dispose()
    }
}
