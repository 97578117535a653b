import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Battery item 1, main-actor variant: the concurrency oracle with `onMainActor()` subscribers.
/// 3 threads dispatch from the background (deliveries enqueued on the main queue) and a fourth
/// dispatches from blocks on the main queue (synchronous delivery), while 2 threads subscribe and
/// dispose main-actor subscribers (plain, keyed, owner-passing) and 6 long-lived ones listen. A
/// shared logical clock stamps every call; the main queue is drained (timed) before checking.
/// See `MainQueue` for how the main queue is serviced under `swift test` on Linux.
@Suite("Reliability: main-actor oracle", .tags(.stress), .offThePool)
struct MainActorOracleTests {
    /// Dispatching "threads": 0..<3 dispatch on their own threads, 3 dispatches on the main queue.
    static let dispatchers = 4
    static let onMainDispatcher = 3
    static let churners = 2
    static let longLived = 6

    struct Tick: Event {
        let thread: Int
        let seq: Int
        var eventType: String? { seq % 2 == 0 ? "even" : nil }
    }

    struct Receipts {
        var seqs: [[Int]] = Array(repeating: [], count: MainActorOracleTests.dispatchers)
        /// Set on the main queue right after `dispose()` returned there.
        var disposeReturned = false
        /// Deliveries that started on the main queue after `dispose()` had returned on it.
        var lateDeliveries = 0
    }

    enum Kind: CaseIterable { case plain, keyed, ownerPassing }

    struct Churn {
        let receipts: Shared<Receipts>
        let kind: Kind
        /// Disposed inside a main-queue block (late deliveries are then detectable exactly), or
        /// from the churning thread after draining the main queue.
        let disposedOnMain: Bool
        let subscribeCalled: Int, subscribeReturned: Int, mustEnd: Int, disposeReturned: Int
    }

    @Test("onMainActor subscribers: exactly once while live, nothing after dispose, per-thread order, count restored")
    func mainActorOracle() async {
        #expect(MainQueue.probe())
        let bus = EventBus()
        let clock = LogicalClock()
        let started = DispatchTime.now()
        let deadline = started.uptimeNanoseconds + UInt64(stressSeconds * 1e9)
        @Sendable func timeIsUp() -> Bool { DispatchTime.now().uptimeNanoseconds >= deadline }

        let longLived = (0..<Self.longLived).map { _ in
            let receipts = Shared(Receipts())
            let token = bus.on(Tick.self).onMainActor().next { event in
                receipts.withLock { $0.seqs[event.thread].append(event.seq) }
            }
            return (receipts, token)
        }
        let startCount = bus.subscriptionCount

        let dispatchStamps = Shared([[(start: Int, end: Int)]](repeating: [], count: Self.dispatchers))
        let churns = Shared([Churn]())
        let mainQueueTimeouts = Shared(0)
        let finished = await concurrentlyAwaiting(Self.dispatchers + Self.churners, within: UInt64(stressSeconds) + 60)
        { thread in
            if thread == Self.onMainDispatcher {
                // Dispatches from main-queue blocks of 64 events: synchronous main-actor delivery.
                let stamps = Shared([(start: Int, end: Int)]())
                while !timeIsUp() {
                    let ran: Void? = MainQueue.run {
                        for _ in 0..<64 {
                            let seq = stamps.value.count
                            let start = clock.tick()
                            bus.dispatch(Tick(thread: thread, seq: seq))
                            let end = clock.tick()
                            stamps.withLock { $0.append((start, end)) }
                        }
                    }
                    if ran == nil {
                        mainQueueTimeouts.increment()
                        break
                    }
                }
                dispatchStamps.withLock { $0[thread] = stamps.value }
            } else if thread < Self.dispatchers {
                var stamps: [(start: Int, end: Int)] = []
                var seq = 0
                while seq % 64 != 0 || !timeIsUp() {
                    let start = clock.tick()
                    bus.dispatch(Tick(thread: thread, seq: seq))
                    stamps.append((start, clock.tick()))
                    seq += 1
                    // Back-pressure: the main queue is one thread; do not let it fall far behind.
                    if seq % 128 == 0, !MainQueue.drain() {
                        mainQueueTimeouts.increment()
                        break
                    }
                }
                dispatchStamps.withLock { $0[thread] = stamps }
            } else {
                var random = SplitMix64(seed: UInt64(thread) &* 104_729)
                var made: [Churn] = []
                while !timeIsUp() {
                    let kind = Kind.allCases[random.next(below: 3)]
                    let disposedOnMain = random.next(below: 2) == 0
                    let receipts = Shared(Receipts())
                    let owner = Sentinel()
                    @Sendable func record(_ event: Tick) {
                        receipts.withLock { receipts in
                            if receipts.disposeReturned { receipts.lateDeliveries += 1 }
                            receipts.seqs[event.thread].append(event.seq)
                        }
                    }
                    let subscribeCalled = clock.tick()
                    let token: EventToken
                    switch kind {
                    case .plain: token = bus.on(Tick.self).onMainActor().next { record($0) }
                    case .keyed: token = bus.on(Tick.self).onMainActor().ofType("even").next { record($0) }
                    case .ownerPassing:
                        token = bus.on(Tick.self).onMainActor().freeWith(owner).next { _, event in record(event) }
                    }
                    let subscribeReturned = clock.tick()
                    let until = subscribeReturned + random.next(below: 40)
                    while clock.now < until, !timeIsUp() { sched_yield() }
                    // Everything dispatched before mustEnd is on the main queue ahead of what follows.
                    let mustEnd = clock.tick()
                    if disposedOnMain {
                        // On the main queue no main-actor delivery is in progress, so one that starts
                        // after this block is a broken dispose guarantee.
                        let ran: Void? = MainQueue.run {
                            token.dispose()
                            receipts.withLock { $0.disposeReturned = true }
                        }
                        if ran == nil {
                            mainQueueTimeouts.increment()
                            break
                        }
                    } else {
                        if !MainQueue.drain() {
                            mainQueueTimeouts.increment()
                            break
                        }
                        token.dispose()
                    }
                    let disposeReturned = clock.tick()
                    withExtendedLifetime(owner) {}
                    made.append(
                        Churn(
                            receipts: receipts, kind: kind, disposedOnMain: disposedOnMain,
                            subscribeCalled: subscribeCalled,
                            subscribeReturned: subscribeReturned, mustEnd: mustEnd, disposeReturned: disposeReturned))
                }
                churns.withLock { $0 += made }
            }
        }
        #expect(finished, "stress threads did not finish in time (deadlock?)")
        #expect(mainQueueTimeouts.value == 0, "the main queue was not serviced in time")
        guard finished else { return }
        // Let every delivery still enqueued on the main queue run (or be refused) before checking.
        #expect(MainQueue.drain())

        let stamps = dispatchStamps.value
        let violations = Violations()
        var longLivedDeliveries = 0
        for (index, (receipts, _)) in longLived.enumerated() {
            let seqs = receipts.value.seqs
            for thread in 0..<Self.dispatchers {
                longLivedDeliveries += seqs[thread].count
                if seqs[thread] != Array(0..<stamps[thread].count) {
                    violations.add(
                        "long-lived #\(index) got \(seqs[thread].count) of \(stamps[thread].count) events of thread \(thread), or out of order"
                    )
                }
            }
        }
        var churnDeliveries = 0
        var required = 0
        var late = 0
        let made = churns.value
        for (index, churn) in made.enumerated() {
            let receipts = churn.receipts.value
            late += receipts.lateDeliveries
            if receipts.lateDeliveries > 0 {
                violations.add(
                    "churn #\(index) (\(churn.kind)): \(receipts.lateDeliveries) deliveries started on the main queue after dispose() returned there"
                )
            }
            let counts = checkWindow(
                "churn #\(index) (\(churn.kind))", got: receipts.seqs, stamps: stamps,
                subscribeCalled: churn.subscribeCalled, subscribeReturned: churn.subscribeReturned,
                mustEnd: churn.mustEnd, disposeReturned: churn.disposeReturned,
                accepts: { churn.kind != .keyed || $0 % 2 == 0 }, into: violations)
            churnDeliveries += counts.received
            required += counts.required
        }

        let endCount = bus.subscriptionCount
        #expect(endCount == startCount, "subscriber count started at \(startCount), ended at \(endCount)")
        #expect(violations.isEmpty, "\(violations.description)")
        #expect(made.count > 0 && stamps.allSatisfy { !$0.isEmpty })
        for (_, token) in longLived { token.dispose() }
        #expect(bus.subscriptionCount == 0)

        let events = stamps.map(\.count).reduce(0, +)
        print(
            "main-actor oracle, \(formatted(secondsSince(started))) s: \(Self.dispatchers - 1) background threads and "
                + "the main queue dispatched \(events) events (\(stamps[Self.onMainDispatcher].count) on the main queue), "
                + "\(Self.churners) threads made and disposed \(made.count) main-actor subscriptions "
                + "(\(made.filter { $0.kind == .keyed }.count) keyed, \(made.filter { $0.kind == .ownerPassing }.count) owner-passing, "
                + "\(made.filter(\.disposedOnMain).count) disposed on the main queue), \(Self.longLived) long-lived subscribers got "
                + "\(longLivedDeliveries) deliveries, churn subscribers \(churnDeliveries) (\(required) required by the stamps), "
                + "\(late) late; count \(startCount) → \(endCount)")
    }
}
