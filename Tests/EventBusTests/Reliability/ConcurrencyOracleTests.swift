import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Battery item 1: the concurrency oracle. 4 threads dispatch, 2 threads subscribe and dispose in a
/// loop, 8 long-lived subscribers listen; a shared logical clock stamps every call, and the receipts
/// are checked against the stamps afterwards. Runs `EVENTBUS_STRESS_SECONDS` (default 1) per variant.
@Suite("Reliability: concurrency oracle", .tags(.stress), .offThePool)
struct ConcurrencyOracleTests {
    static let dispatchers = 4
    static let churners = 2
    static let longLived = 8

    struct OracleEvent: Event {
        let thread: Int
        let seq: Int
        /// Even events carry the key "even", so keyed churn subscribers see every other event.
        var eventType: String? { seq % 2 == 0 ? "even" : nil }
    }

    /// What one subscriber received, per dispatching thread, in arrival order.
    struct Receipts {
        var seqs: [[Int]] = Array(repeating: [], count: ConcurrencyOracleTests.dispatchers)
        /// Set (on the subscriber's serial queue) right after `dispose()` returned there.
        var disposeReturned = false
        /// Deliveries that started on the queue after `dispose()` had returned on it.
        var lateDeliveries = 0
    }

    /// One churn subscription and the clock stamps around it.
    struct Churn {
        let receipts: Shared<Receipts>
        let keyed: Bool
        let queue: DispatchQueue?
        /// Stamps: before `next`, after `next` returned, end of the window in which every dispatch
        /// must be received (before dispose; for queued subscribers before the queue was drained),
        /// after `dispose()` returned.
        let subscribeCalled: Int, subscribeReturned: Int, mustEnd: Int, disposeReturned: Int
    }

    @Test("Synchronous subscribers: exactly once while live, never outside their lifetime, in order")
    func synchronousOracle() {
        run(queued: false)
    }

    @Test("atQueue subscribers: exactly once while live, never outside their lifetime, nothing after dispose")
    func queuedOracle() {
        run(queued: true)
    }

    func run(queued: Bool) {
        let bus = EventBus()
        let clock = LogicalClock()
        let started = DispatchTime.now()
        let deadline = started.uptimeNanoseconds + UInt64(stressSeconds * 1e9)
        @Sendable func timeIsUp() -> Bool { DispatchTime.now().uptimeNanoseconds >= deadline }

        // The long-lived subscribers, each with its own serial queue when queued.
        let longLived = (0..<Self.longLived).map { index in
            let receipts = Shared(Receipts())
            let queue = queued ? DispatchQueue(label: "oracle.long.\(index)") : nil
            let token = bus.on(OracleEvent.self).next(on: queue) { event in
                receipts.withLock { $0.seqs[event.thread].append(event.seq) }
            }
            return (receipts, queue, token)
        }
        let startCount = bus.subscriptionCount

        let dispatchStamps = Shared([[(start: Int, end: Int)]](repeating: [], count: Self.dispatchers))
        let churns = Shared([Churn]())
        let finished = concurrently(Self.dispatchers + Self.churners, timeout: .seconds(Int(stressSeconds) + 60)) {
            thread in
            if thread < Self.dispatchers {
                var stamps: [(start: Int, end: Int)] = []
                var seq = 0
                while seq % 64 != 0 || !timeIsUp() {
                    let start = clock.tick()
                    bus.dispatch(OracleEvent(thread: thread, seq: seq))
                    stamps.append((start, clock.tick()))
                    seq += 1
                }
                dispatchStamps.withLock { $0[thread] = stamps }
            } else {
                var random = SplitMix64(seed: UInt64(thread) &* 7919)
                var made: [Churn] = []
                while !timeIsUp() {
                    let keyed = random.next(below: 3) == 0
                    let queue = queued ? DispatchQueue(label: "oracle.churn") : nil
                    let receipts = Shared(Receipts())
                    var maker = bus.on(OracleEvent.self)
                    if keyed { maker = maker.ofType("even") }
                    let subscribeCalled = clock.tick()
                    let token = maker.next(on: queue) { event in
                        receipts.withLock { receipts in
                            if receipts.disposeReturned { receipts.lateDeliveries += 1 }
                            receipts.seqs[event.thread].append(event.seq)
                        }
                    }
                    let subscribeReturned = clock.tick()
                    // Stay subscribed while the dispatchers advance the clock by 0–40 ticks.
                    let until = subscribeReturned + random.next(below: 40)
                    while clock.now < until, !timeIsUp() { sched_yield() }
                    let mustEnd: Int
                    if let queue {
                        mustEnd = clock.tick()
                        _ = drain(queue)  // everything dispatched before mustEnd has now been delivered
                        // Dispose on the subscriber's serial queue: no delivery can be in progress, so
                        // any delivery that starts after this block is a broken dispose guarantee.
                        queue.sync {
                            token.dispose()
                            receipts.withLock { $0.disposeReturned = true }
                        }
                    } else {
                        mustEnd = clock.tick()
                        token.dispose()
                    }
                    made.append(
                        Churn(
                            receipts: receipts, keyed: keyed, queue: queue, subscribeCalled: subscribeCalled,
                            subscribeReturned: subscribeReturned, mustEnd: mustEnd, disposeReturned: clock.tick()))
                }
                churns.withLock { $0 += made }
            }
        }
        #expect(finished, "stress threads did not finish in time (deadlock?)")
        guard finished else { return }
        for (_, queue, _) in longLived { if let queue { #expect(drain(queue)) } }
        for churn in churns.value { if let queue = churn.queue { #expect(drain(queue)) } }

        let stamps = dispatchStamps.value
        var violations: [String] = []
        func violation(_ message: @autoclosure () -> String) {
            if violations.count < 10 {
                violations.append(message())
            } else if violations.count == 10 {
                violations.append("…")
            }
        }

        // Long-lived subscribers: every event, exactly once, in order per dispatching thread.
        var longLivedDeliveries = 0
        for (index, (receipts, _, _)) in longLived.enumerated() {
            let seqs = receipts.value.seqs
            for thread in 0..<Self.dispatchers {
                longLivedDeliveries += seqs[thread].count
                if seqs[thread] != Array(0..<stamps[thread].count) {
                    violation(
                        "long-lived #\(index) got \(seqs[thread].count) of \(stamps[thread].count) events of thread \(thread), or out of order"
                    )
                }
            }
        }

        // Churn subscribers, against the stamps.
        var churnDeliveries = 0
        var mustDeliveries = 0
        let made = churns.value
        for (index, churn) in made.enumerated() {
            let receipts = churn.receipts.value
            if receipts.lateDeliveries > 0 {
                violation("churn #\(index): \(receipts.lateDeliveries) deliveries started after dispose() returned")
            }
            for thread in 0..<Self.dispatchers {
                let events = stamps[thread]
                let got = receipts.seqs[thread]
                churnDeliveries += got.count
                // Dispatches that overlap [subscribeCalled, disposeReturned] may be received...
                let mayFrom = partitionPoint(events.count) { events[$0].end > churn.subscribeCalled }
                let mayTo = partitionPoint(events.count) { events[$0].start > churn.disposeReturned }
                // ...and those wholly inside [subscribeReturned, mustEnd] must be.
                let mustFrom = partitionPoint(events.count) { events[$0].start > churn.subscribeReturned }
                let mustTo = partitionPoint(events.count) { events[$0].end >= churn.mustEnd }
                if zip(got, got.dropFirst()).contains(where: { $0 >= $1 }) {
                    violation(
                        "churn #\(index) got thread \(thread)'s events duplicated or out of order: \(got.prefix(20))")
                }
                if let outside = got.first(where: { !(mayFrom..<mayTo).contains($0) }) {
                    violation(
                        "churn #\(index) got event \(thread):\(outside), dispatched wholly outside its subscription "
                            + "(may receive \(mayFrom)..<\(mayTo))")
                }
                if churn.keyed, let odd = got.first(where: { $0 % 2 != 0 }) {
                    violation("keyed churn #\(index) got unkeyed event \(thread):\(odd)")
                }
                if mustFrom < mustTo {
                    let must = (mustFrom..<mustTo).filter { !churn.keyed || $0 % 2 == 0 }
                    mustDeliveries += must.count
                    let received = Set(got)
                    if let missing = must.first(where: { !received.contains($0) }) {
                        violation("churn #\(index) missed event \(thread):\(missing), dispatched while it was live")
                    }
                }
            }
        }

        let endCount = bus.subscriptionCount
        #expect(endCount == startCount, "subscriber count started at \(startCount), ended at \(endCount)")
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
        #expect(made.count > 0 && stamps.allSatisfy { !$0.isEmpty })
        for (_, _, token) in longLived { token.dispose() }
        #expect(bus.subscriptionCount == 0)

        let events = stamps.map(\.count).reduce(0, +)
        print(
            "oracle(\(queued ? "atQueue" : "sync")), \(formatted(secondsSince(started))) s: "
                + "\(Self.dispatchers) threads dispatched \(events) events, \(Self.churners) threads made and disposed "
                + "\(made.count) subscriptions (\(made.filter(\.keyed).count) keyed), \(Self.longLived) long-lived "
                + "subscribers got \(longLivedDeliveries) deliveries, churn subscribers \(churnDeliveries) "
                + "(\(mustDeliveries) required by the stamps); count \(startCount) → \(endCount)")
    }
}
