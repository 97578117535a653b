import Dispatch
import Testing

@testable import EventBus

/// Issue 41, findings 3 and 4: one mailbox per (actor, bus) and per (queue, bus), shared by their
/// subscriptions, in dispatch order; a drain runs a bounded batch and leaves the actor; it runs at
/// the priority of the highest delivery waiting.
@Suite("Flow control: order across an actor's subscriptions, bounded batches, priority")
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

    @Test(
        "A drain leaves the actor after a bounded batch: an actor method called during a flood runs before the flood ends"
    )
    func boundedBatch() async {
        let bus = EventBus()
        let log = Log()
        let total = 20_000
        let gate = DispatchSemaphore(value: 0)
        let token = bus.on(Tick.self).isolated(to: log).next { log, tick in
            if tick.number == 0 { _ = gate.wait(timeout: .now() + .seconds(30)) }
            log.handled += 1
            log.count.increment()
        }
        // The first delivery holds the actor (off the pool's other thread) until every event waits.
        await offThePool { for number in 0..<total { bus.dispatch(Tick(number: number)) } }
        // The method's job waits on the actor behind the running batch (off the pool meanwhile, so
        // the task can start and reach the actor).
        let marked = Task.detached { await log.mark() }
        await offThePool { usleepMilliseconds(50) }
        gate.signal()
        await marked.value
        #expect(await waitUntil(timeout: actorTimeout) { log.count.value == total })
        let handledWhenCalled = await log.handledWhenCalled ?? total
        print("bounded batch: an actor method called during a flood of \(total) ran after \(handledWhenCalled)")
        #expect(handledWhenCalled < total / 2, "the method waited for \(handledWhenCalled) of \(total) deliveries")
        token.dispose()
    }

    @Test("A .high delivery behind a .background one runs at .high or above")
    func drainPriority() async {
        let bus = EventBus()
        let log = Log()
        let gate = DispatchSemaphore(value: 0)
        let token = bus.on(Tick.self).isolated(to: log).next { log, tick in
            if tick.number == 0 { _ = gate.wait(timeout: .now() + .seconds(30)) }
            log.priorities.append(Task.currentPriority)
            log.count.increment()
        }
        await Task.detached(priority: .background) { bus.dispatch(Tick(number: 0)) }.value
        await Task.detached(priority: .background) { bus.dispatch(Tick(number: 1)) }.value
        await Task.detached(priority: .high) { bus.dispatch(Tick(number: 2)) }.value
        gate.signal()
        #expect(await waitUntil(timeout: actorTimeout) { log.count.value == 3 })
        let priorities = await log.priorities
        print("drain priority: deliveries ran at \(priorities.map(\.rawValue))")
        #expect(priorities.last.map { $0 >= .high } == true, "the .high delivery ran at \(priorities)")
        token.dispose()
    }
}
