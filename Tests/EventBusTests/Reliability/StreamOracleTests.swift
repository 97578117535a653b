import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Battery item 1, stream variant: the concurrency oracle with `AsyncStream` subscribers. 4 threads
/// dispatch while 2 threads create streams (`bus.events(of:)`, with and without keys, and
/// `maker.events()`) and end them, half by cancelling the consuming task and half by the consumer
/// breaking out of its loop (dropping the stream); 2 long-lived streams listen throughout. Each
/// event carries the clock stamp taken before its dispatch, so a consumer can stop right after a
/// given time.
@Suite("Reliability: stream oracle", .tags(.stress), .offThePool)
struct StreamOracleTests {
    static let dispatchers = 4
    static let churners = 2
    static let longLived = 2
    /// Consumers a churning thread lets run at once.
    static let maxRunning = 3

    struct Flow: Event {
        /// The dispatching thread; -1 for the end-of-test marker every consumer stops at.
        let thread: Int
        let seq: Int
        /// The clock before this dispatch.
        let start: Int
        var eventType: String? { seq % 2 == 0 ? "even" : nil }
    }

    enum Ending { case cancel, breakAfterMustEnd }

    /// One stream's consumer: what it received, and when to stop.
    final class Consumer: Sendable {
        let seqs = Shared([[Int]](repeating: [], count: StreamOracleTests.dispatchers))
        /// For `.breakAfterMustEnd`: the consumer breaks at the first event dispatched after this.
        let stopAfter = Shared<Int?>(nil)
        let finished = Shared(false)

        /// Starts the consuming task on `executor`; the task owns the stream.
        func start(_ stream: EventStream<Flow>, on executor: QueueTaskExecutor) -> Task<Void, Never> {
            Task(executorPreference: executor) { [seqs, stopAfter, finished] in
                for await event in stream {
                    if event.thread < 0 { break }
                    seqs.withLock { $0[event.thread].append(event.seq) }
                    if let limit = stopAfter.value, event.start > limit { break }
                }
                finished.withLock { $0 = true }
            }
        }
    }

    struct Churn {
        let consumer: Consumer
        let keyed: Bool
        let ending: Ending
        let subscribeCalled: Int, subscribeReturned: Int, mustEnd: Int
    }

    @Test("Streams made and ended while 4 threads dispatch: each gets what it should, once, in order; count back to 0")
    func streamOracle() async {
        let bus = EventBus()
        let clock = LogicalClock()
        let started = DispatchTime.now()
        let deadline = started.uptimeNanoseconds + UInt64(stressSeconds * 1e9)
        @Sendable func timeIsUp() -> Bool { DispatchTime.now().uptimeNanoseconds >= deadline }

        let executor = QueueTaskExecutor(label: "StreamOracleTests.consumers")
        let longLived = (0..<Self.longLived).map { _ in
            let consumer = Consumer()
            return (consumer, consumer.start(bus.events(of: Flow.self), on: executor))
        }
        #expect(bus.subscriptionCount == Self.longLived)

        let dispatchStamps = Shared([[(start: Int, end: Int)]](repeating: [], count: Self.dispatchers))
        let churns = Shared([Churn]())
        let paceTimeouts = Shared(0)
        let finished = await concurrentlyAwaiting(Self.dispatchers + Self.churners, within: UInt64(stressSeconds) + 60)
        { thread in
            if thread < Self.dispatchers {
                var stamps: [(start: Int, end: Int)] = []
                var seq = 0
                while seq % 64 != 0 || !timeIsUp() {
                    let start = clock.tick()
                    bus.dispatch(Flow(thread: thread, seq: seq, start: start))
                    stamps.append((start, clock.tick()))
                    seq += 1
                    // Back-pressure: consumers share the cooperative pool; keep their backlog short
                    // so that streams ended by a break stop soon and new ones keep coming.
                    if seq % 32 == 0 {
                        let pacer = longLived[0].0
                        if !waitUntil({ pacer.seqs.value[thread].count >= seq - 64 }) { paceTimeouts.increment() }
                    }
                }
                dispatchStamps.withLock { $0[thread] = stamps }
            } else {
                var random = SplitMix64(seed: UInt64(thread) &* 15_485_863)
                var made: [Churn] = []
                while !timeIsUp() {
                    // At most 3 of this thread's consumers still running: lagging consumers keep
                    // their streams subscribed, and every live stream costs each dispatch a yield.
                    let running = made.suffix(Self.maxRunning).filter { !$0.consumer.finished.value }.count
                    if running >= Self.maxRunning {
                        usleepMilliseconds(1)
                        continue
                    }
                    let keyed = random.next(below: 3) == 0
                    let ending: Ending = random.next(below: 2) == 0 ? .cancel : .breakAfterMustEnd
                    let consumer = Consumer()
                    let subscribeCalled = clock.tick()
                    let stream: EventStream<Flow>
                    switch (keyed, random.next(below: 2)) {
                    case (false, 0): stream = bus.events(of: Flow.self)
                    case (false, _): stream = bus.on(Flow.self).events()
                    case (true, 0): stream = bus.events(of: Flow.self, ofType: "even")
                    case (true, _): stream = bus.on(Flow.self).ofType("even").events()
                    }
                    let subscribeReturned = clock.tick()
                    let task = consumer.start(stream, on: executor)
                    let until = subscribeReturned + random.next(below: 40)
                    while clock.now < until, !timeIsUp() { sched_yield() }
                    let mustEnd = clock.tick()
                    switch ending {
                    case .cancel: task.cancel()
                    case .breakAfterMustEnd: consumer.stopAfter.withLock { $0 = mustEnd }
                    }
                    made.append(
                        Churn(
                            consumer: consumer, keyed: keyed, ending: ending, subscribeCalled: subscribeCalled,
                            subscribeReturned: subscribeReturned, mustEnd: mustEnd))
                }
                churns.withLock { $0 += made }
            }
        }
        #expect(finished, "stress threads did not finish in time (deadlock?)")
        #expect(paceTimeouts.value == 0, "the long-lived consumer fell behind by more than 64 events for 10 s")
        guard finished else { return }
        // Every consumer still waiting stops at the marker; then every subscription must end.
        bus.dispatch(Flow(thread: -1, seq: 0, start: clock.tick()))
        let made = churns.value
        let consumers = longLived.map(\.0) + made.map(\.consumer)
        let allStopped = await waitUntil(timeout: .seconds(30)) { consumers.allSatisfy { $0.finished.value } }
        #expect(
            allStopped, "\(consumers.filter { !$0.finished.value }.count) of \(consumers.count) consumers did not stop")
        let countBackToZero = await waitUntil(timeout: .seconds(10)) { bus.subscriptionCount == 0 }
        #expect(
            countBackToZero,
            "\(bus.subscriptionCount) stream subscriptions still registered after all consumers stopped")

        let stamps = dispatchStamps.value
        let violations = Violations()
        var longLivedDeliveries = 0
        for (index, (consumer, _)) in longLived.enumerated() {
            let seqs = consumer.seqs.value
            for thread in 0..<Self.dispatchers {
                longLivedDeliveries += seqs[thread].count
                if seqs[thread] != Array(0..<stamps[thread].count) {
                    violations.add(
                        "long-lived stream #\(index) got \(seqs[thread].count) of \(stamps[thread].count) events of thread \(thread), or out of order"
                    )
                }
            }
        }
        var churnDeliveries = 0
        var required = 0
        for (index, churn) in made.enumerated() {
            // A stream's subscription ends some time after the consumer stops (on cancellation, or
            // when the task drops the stream): no upper bound to check, but within what it got,
            // nothing missing, duplicated or out of order, and, when the consumer stopped by
            // itself after mustEnd, everything dispatched while it was surely live.
            let counts = checkWindow(
                "stream #\(index) (\(churn.keyed ? "keyed" : "all"), \(churn.ending))", got: churn.consumer.seqs.value,
                stamps: stamps, subscribeCalled: churn.subscribeCalled, subscribeReturned: churn.subscribeReturned,
                mustEnd: churn.ending == .breakAfterMustEnd ? churn.mustEnd : nil, disposeReturned: nil, gapFree: true,
                accepts: { !churn.keyed || $0 % 2 == 0 }, into: violations)
            churnDeliveries += counts.received
            required += counts.required
        }
        #expect(violations.isEmpty, "\(violations.description)")
        #expect(made.count > 0 && stamps.allSatisfy { !$0.isEmpty })

        let events = stamps.map(\.count).reduce(0, +)
        print(
            "stream oracle, \(formatted(secondsSince(started))) s: \(Self.dispatchers) threads dispatched \(events) events, "
                + "\(Self.churners) threads made \(made.count) streams (\(made.filter(\.keyed).count) keyed, "
                + "\(made.filter { $0.ending == .cancel }.count) ended by cancel, "
                + "\(made.filter { $0.ending == .breakAfterMustEnd }.count) by break), \(Self.longLived) long-lived streams got "
                + "\(longLivedDeliveries) events, churn streams \(churnDeliveries) (\(required) required by the stamps); "
                + "count \(Self.longLived) → \(bus.subscriptionCount)")
    }
}
