import Dispatch
import Testing

@testable import EventBus

/// DESIGN §7: an `.untilDelivered` event counts as received when a handler runs for it, in every
/// mode; an enqueued delivery (queue, main actor, an enqueued replay) that finds its subscription
/// disposed or its owner gone when it runs leaves the event kept for the next taker.
@Suite(
    "Policies: .untilDelivered received when a handler runs, enqueued deliveries included", .tags(.stress), .offThePool)
struct StickyEnqueuedTakerTests {
    struct Job: Event, Equatable {
        let id: Int
        var key: String? = nil
        var eventType: String? { key }
    }

    final class Owner: Sendable {}

    protocol Work: Sendable { var id: Int { get } }

    struct Urgent: Event, Work, DeliveredAsSupertypes {
        let id: Int
        static var supertypes: [Supertype<Self>] { [.as((any Work).self) { $0 }] }
    }

    @Test("A queued replaying taker disposed before its queue runs leaves the event kept for the next taker")
    func queuedReplayDisposed() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "sticky.taker.disposed")
        bus.dispatch(Job(id: 1), sticky: .untilDelivered)
        let got = Shared<[Int]>([])
        queue.suspend()
        let token = bus.on(Job.self).atQueue(queue).replayingSticky().next { job in got.withLock { $0.append(job.id) } }
        token.dispose()
        queue.resume()
        #expect(drain(queue))
        #expect(got.value.isEmpty, "disposed before its queue ran: not called")
        #expect(bus.sticky(Job.self) == Job(id: 1), "nobody received it, so it is kept")
        #expect(bus.stickyCount == 1)
        let later = Shared<[Int]>([])
        _ = bus.on(Job.self).replayingSticky().next { job in later.withLock { $0.append(job.id) } }
        #expect(later.value == [1])
        #expect(bus.stickyCount == 0)
    }

    @Test("A queued replaying taker whose owner dies before its queue runs leaves the event kept")
    func queuedReplayOwnerGone() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "sticky.taker.owner")
        bus.dispatch(Job(id: 1, key: "a"), sticky: .untilDelivered)
        bus.dispatch(Job(id: 2, key: "b"), sticky: .untilDelivered)
        let calls = Shared(0)
        queue.suspend()
        do {
            let owner = Owner()
            _ = bus.on(Job.self).freeWith(owner).atQueue(queue).replayingSticky().next { _, _ in calls.increment() }
        }  // the owner is gone, its replay still enqueued
        queue.resume()
        #expect(drain(queue))
        #expect(calls.value == 0)
        #expect(bus.stickyEvents(Job.self, ofType: "a") == [Job(id: 1, key: "a")])
        #expect(bus.stickyEvents(Job.self, ofType: "b") == [Job(id: 2, key: "b")])
        let later = Shared<[Int]>([])
        _ = bus.on(Job.self).replayingSticky().next { job in later.withLock { $0.append(job.id) } }
        #expect(later.value == [1, 2], "kept in dispatch order")
    }

    @Test("A live dispatch to a queued subscriber disposed, or whose owner dies, before its queue runs is kept")
    func liveQueuedNotRun() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "sticky.live.queued")
        let calls = Shared(0)
        let token = bus.on(Job.self).ofType("a").atQueue(queue).next { _ in calls.increment() }
        var owner: Owner? = Owner()
        _ = bus.on(Job.self).ofType("b").freeWith(owner!).atQueue(queue).next { _, _ in calls.increment() }
        queue.suspend()
        bus.dispatch(Job(id: 1, key: "a"), sticky: .untilDelivered)
        bus.dispatch(Job(id: 2, key: "b"), sticky: .untilDelivered)
        token.dispose()
        owner = nil
        queue.resume()
        #expect(drain(queue))
        #expect(calls.value == 0)
        #expect(bus.sticky(Job.self, ofType: "a") == Job(id: 1, key: "a"))
        #expect(bus.sticky(Job.self, ofType: "b") == Job(id: 2, key: "b"))
        #expect(bus.stickyCount == 2)
    }

    @Test("A queued subscriber that runs receives it: not kept; a held event is not taken meanwhile")
    func liveQueuedRuns() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "sticky.live.runs")
        let got = Shared<[Int]>([])
        _ = bus.on(Job.self).atQueue(queue).next { job in got.withLock { $0.append(job.id) } }
        queue.suspend()
        bus.dispatch(Job(id: 1), sticky: .untilDelivered)
        // Its delivery is pending: the event is held back, neither returned nor taken.
        #expect(bus.sticky(Job.self) == nil)
        #expect(bus.takeSticky(Job.self) == nil)
        let replayed = Shared(0)
        _ = bus.on(Job.self).replayingSticky().next { _ in replayed.increment() }
        #expect(replayed.value == 0)
        queue.resume()
        #expect(drain(queue))
        #expect(got.value == [1])
        #expect(bus.stickyCount == 0)
    }

    @Test(
        "A main-actor subscriber dispatched to from a background thread, whose owner dies before the main queue runs: kept"
    )
    func mainActorOwnerGone() {
        let bus = EventBus()
        let calls = Shared(0)
        var owner: Owner? = Owner()
        _ = bus.on(Job.self).onMainActor().freeWith(owner!).next { _, _ in calls.increment() }
        let gate = MainQueue.block()
        #expect(onAnotherThread { bus.dispatch(Job(id: 7), sticky: .untilDelivered) })
        owner = nil
        #expect(gate.open())
        #expect(calls.value == 0)
        #expect(bus.sticky(Job.self) == Job(id: 7), "nobody received it, so it is kept")
        let later = Shared<[Int]>([])
        _ = bus.on(Job.self).replayingSticky().next { job in later.withLock { $0.append(job.id) } }
        #expect(later.value == [7])
    }

    @Test("A main-actor replaying taker subscribed off the main queue and disposed before it runs leaves it kept")
    func mainActorReplayDisposed() {
        let bus = EventBus()
        let calls = Shared(0)
        bus.dispatch(Job(id: 3), sticky: .untilDelivered)
        let gate = MainQueue.block()
        #expect(
            onAnotherThread {
                let token = bus.on(Job.self).onMainActor().replayingSticky().next { _ in calls.increment() }
                token.dispose()
            })
        #expect(gate.open())
        #expect(calls.value == 0)
        #expect(bus.sticky(Job.self) == Job(id: 3))
    }

    @Test("Queued supertype subscribers and monitors: disposed before their queue runs, they leave it kept")
    func supertypesAndMonitorsQueued() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "sticky.supertypes.queued")
        let got = Shared<[String]>([])
        let tokens = [
            bus.on(anyOf: (any Work).self).atQueue(queue).next { got.append("work-\($0.id)") },
            bus.on(Urgent.self).monitor().atQueue(queue).next { got.append("monitor-\($0.id)") },
            bus.on(anyOf: (any Work).self).monitor().atQueue(queue).next { got.append("work-monitor-\($0.id)") },
        ]
        queue.suspend()
        bus.dispatch(Urgent(id: 1), sticky: .untilDelivered)
        for token in tokens { token.dispose() }
        queue.resume()
        #expect(drain(queue))
        #expect(got.value.isEmpty)
        #expect(bus.sticky(Urgent.self)?.id == 1, "nobody received it, so it is kept")
        // One of them left: it receives the next one, which is then not kept.
        _ = bus.on(anyOf: (any Work).self).monitor().atQueue(queue).next { got.append("work-monitor-\($0.id)") }
        bus.dispatch(Urgent(id: 2), sticky: .untilDelivered)
        #expect(drain(queue))
        #expect(got.value == ["work-monitor-2"])
        #expect(bus.stickyCount == 0)
    }

    @Test("A synchronous subscriber and a queued one of the same dispatch both get it; it is not kept")
    func synchronousAndQueued() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "sticky.sync.queued")
        let got = Shared<[String]>([])
        _ = bus.on(Job.self).next { _ in got.append("sync") }
        let token = bus.on(Job.self).atQueue(queue).next { _ in got.append("queued") }
        queue.suspend()
        bus.dispatch(Job(id: 1), sticky: .untilDelivered)
        token.dispose()  // the queued one will not run, but the synchronous one received it
        queue.resume()
        #expect(drain(queue))
        #expect(got.value == ["sync"])
        #expect(bus.stickyCount == 0)
        let queuedToo = Shared(0)
        _ = bus.on(Job.self).atQueue(queue).next { _ in queuedToo.increment() }
        bus.dispatch(Job(id: 2), sticky: .untilDelivered)
        #expect(drain(queue))
        #expect(queuedToo.value == 1, "every live subscriber of the dispatch gets it, as any dispatch")
        #expect(bus.stickyCount == 0)
    }

    /// How one taker of the race ends: disposed at once, its owner gone at once, or served (its
    /// queue drained) before it is disposed.
    private enum Fate: CaseIterable {
        case disposed, ownerGone, served
    }

    /// How one taker of the race is delivered to.
    private enum Mode: CaseIterable {
        case synchronous, queued, mainActor, actor
    }

    /// The owner of an `.actor` taker.
    private actor ActorTaker {}

    @Test("Takers disposed or losing their owner at random, racing dispatches: each event received once or kept")
    func takersRace() async {
        let dispatchers = 2
        let perDispatcher = 3_000
        let takerThreads = 4
        let events = dispatchers * perDispatcher
        let bus = EventBus()
        let queues = (0..<takerThreads).map { DispatchQueue(label: "sticky.race.\($0)") }
        let received = Shared([Int](repeating: 0, count: events))
        let made = Shared([String: Int]())
        // Off the cooperative pool: the actor takers' deliveries run on it.
        let finished = await offThePool {
            concurrently(dispatchers + takerThreads, timeout: .seconds(60)) { worker in
                if worker < dispatchers {
                    for n in 0..<perDispatcher {
                        let id = worker * perDispatcher + n
                        bus.dispatch(Job(id: id, key: "\(id)"), sticky: .untilDelivered)
                    }
                    return
                }
                // Each key has at most one taker at a time (this thread's), so a delivery, live or
                // replayed, is that key's one receipt.
                let thread = worker - dispatchers
                var random = SplitMix64(seed: UInt64(thread) &+ 29)
                var tally: [String: Int] = [:]
                for id in stride(from: thread, to: events, by: takerThreads) {
                    for _ in 0..<1 + random.next(below: 2) {
                        let mode = Mode.allCases[random.next(below: Mode.allCases.count)]
                        let fate = Fate.allCases[random.next(below: Fate.allCases.count)]
                        tally["\(mode)", default: 0] += 1
                        tally["\(fate)", default: 0] += 1
                        var owner: Owner? = Owner()
                        var actorOwner: ActorTaker? = ActorTaker()
                        let record: @Sendable (Owner, Job) -> Void = { _, job in
                            received.withLock { $0[job.id] += 1 }
                        }
                        let maker = bus.on(Job.self).ofType("\(id)").replayingSticky().freeWith(owner!)
                        let token: EventToken
                        switch mode {
                        case .synchronous: token = maker.next(record)
                        case .queued: token = maker.atQueue(queues[thread]).next(record)
                        case .mainActor: token = maker.onMainActor().next(record)
                        case .actor:
                            token = bus.on(Job.self).ofType("\(id)").replayingSticky().isolated(to: actorOwner!).next {
                                _, job in received.withLock { $0[job.id] += 1 }
                            }
                        }
                        if random.next(below: 8) == 0 { usleepMilliseconds(1) }
                        switch fate {
                        case .disposed: token.dispose()
                        case .ownerGone:
                            owner = nil
                            actorOwner = nil
                        case .served:
                            switch mode {
                            case .synchronous: break
                            case .queued: _ = drain(queues[thread])
                            case .mainActor: _ = MainQueue.drain()
                            case .actor: usleepMilliseconds(1)  // time to run on the actor; not awaited
                            }
                        }
                        token.dispose()  // the next taker of this key is the only one
                        withExtendedLifetime((owner, actorOwner)) {}
                    }
                }
                made.withLock { all in all.merge(tally, uniquingKeysWith: +) }
            }
        }
        #expect(finished)
        for queue in queues { #expect(drain(queue)) }
        #expect(MainQueue.drain())
        #expect(await waitUntil(timeout: actorTimeout) { bus.core.inFlight.count == 0 })
        var lost: [Int] = []
        var twice: [Int] = []
        var kept = 0
        let counts = received.value
        for id in 0..<events {
            let isKept = bus.sticky(Job.self, ofType: "\(id)") != nil
            if isKept { kept += 1 }
            if counts[id] + (isKept ? 1 : 0) == 0 { lost.append(id) }
            if counts[id] + (isKept ? 1 : 0) > 1 { twice.append(id) }
        }
        let receipts = counts.reduce(0, +)
        #expect(lost.count == 0, "\(lost.count) of \(events) events neither received nor kept, e.g. \(lost.prefix(5))")
        #expect(twice.count == 0, "\(twice.count) events received twice or received and kept, e.g. \(twice.prefix(5))")
        #expect(bus.stickyCount == kept)
        let m = made.value
        print(
            ".untilDelivered takers race: \(events) events from \(dispatchers) threads, "
                + "\(Mode.allCases.map { m["\($0)", default: 0] }.reduce(0, +)) takers "
                + "(\(m["synchronous", default: 0]) synchronous, \(m["queued", default: 0]) queued, "
                + "\(m["mainActor", default: 0]) main-actor, \(m["actor", default: 0]) actor; "
                + "\(m["disposed", default: 0]) disposed, "
                + "\(m["ownerGone", default: 0]) owners gone at once), \(receipts) received, \(kept) kept, "
                + "\(lost.count) lost, \(twice.count) twice")
    }
}
