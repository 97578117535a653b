// Off-thread deliveries (issue 41): one producer thread hands one-`Int` events to one consumer
// that runs elsewhere (a serial queue, an actor, the main actor, a stream's consuming task), through
// EventBus's off-thread modes and through what a user would write instead, down to the floor: a
// bare ring that a consumer thread empties in batches.
//
// Each contender can be built with its consumer held (blocked behind a gate), so that everything
// the producer sends waits: a backlog, whose enqueue cost and memory are measured before the gate
// opens and the consumer drains it. `OffThreadReport.swift` measures every contender that way and
// the others (consumer running, consumer idle at each event) for `EventBusMailbox`; the
// package-benchmark scenarios "backlog-…" below measure the enqueue of a backlog alone (allocations
// per event, for the allocation gate once the mailbox makes them 0).
//
// Every consumer runs the same handler body: the shared `Sink`, then the `Countdown`.

import AsyncAlgorithms
import Dispatch
import EventBus
import Foundation
import Synchronization

/// A way of handing events from one producer thread to one consumer elsewhere.
public struct OffThreadContender: Sendable {
    /// What a contender is measured for.
    struct Modes: OptionSet {
        let rawValue: Int
        /// Its consumer can be held while events wait (not AsyncChannel's: a send waits for it).
        static let backlog = Self(rawValue: 1)
        /// Its consumer keeps up with the producer as best it can, one event after another.
        static let running = Self(rawValue: 2)
        /// One event at a time, to a consumer that was idle: the latency to the handler.
        static let latency = Self(rawValue: 4)
        /// Also a package-benchmark scenario, "backlog-<name>" (the enqueue of a backlog).
        static let scenario = Self(rawValue: 8)
    }

    /// "<scenario>_<contender>" as the other scenarios are named, e.g. "atQueue EventBus".
    public let name: String
    /// The table's row title.
    public let title: String
    let modes: Modes
    let make: @Sendable (OffThreadSetup) -> OffThreadSubject

    init(
        _ name: String, _ title: String, _ modes: Modes,
        make: @escaping @Sendable (OffThreadSetup) -> OffThreadSubject
    ) {
        self.name = name
        self.title = title
        self.modes = modes
        self.make = make
    }
}

/// What a contender is built for.
struct OffThreadSetup {
    /// Counts the handled events; its `finishedAt` is when the last one ran.
    let countdown: Countdown
    /// Whether the consumer is held (behind a gate) when `make` returns.
    let held: Bool
    /// The most events that will wait at once (the ring's capacity).
    let capacity: Int
}

/// A contender built: the producer's side, and the gate holding its consumer.
final class OffThreadSubject {
    /// Sends the events `values`, in order, from the calling thread.
    let produce: (Range<Int>) -> Void
    private let gate: Gate?
    private let finish: () -> Void

    init(gate: Gate?, finish: @escaping () -> Void = {}, produce: @escaping (Range<Int>) -> Void) {
        self.gate = gate
        self.finish = finish
        self.produce = produce
    }

    /// Lets a held consumer go.
    func release() { gate?.open() }

    /// Releases the consumer if held, and what the contender keeps outside itself (tasks, tokens).
    func tearDown() {
        release()
        finish()
    }
}

/// Blocks a consumer until opened: a thread (a queue's, an actor's) with `block()`, a task before
/// its loop with `pass()`.
final class Gate: Sendable {
    private let held = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)
    private let opening: AsyncStream<Never>
    private let openingContinuation: AsyncStream<Never>.Continuation

    init() {
        (opening, openingContinuation) = AsyncStream.makeStream()
    }

    /// A gate already holding the consumer that `hold` sets blocking on it, or nil if not `held`.
    static func holding(_ held: Bool, _ hold: (Gate) -> Void) -> Gate? {
        guard held else { return nil }
        let gate = Gate()
        hold(gate)
        gate.waitUntilHeld()
        return gate
    }

    /// On the consumer's thread: says it is held, and blocks until `open()`.
    func block() {
        held.signal()
        opened.wait()
    }

    /// In the consumer's task: says it is held, and suspends until `open()`.
    func pass() async {
        held.signal()
        for await _ in opening {}
    }

    /// Waits until the consumer is in `block()` or `pass()`.
    func waitUntilHeld() { held.wait() }

    func open() {
        opened.signal()
        openingContinuation.finish()
    }
}

/// Every contender, in table order: EventBus's off-thread modes, then the peers, then the floor.
public func offThreadContenders() -> [OffThreadContender] {
    var contenders = eventBusContenders() + peerContenders()
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
        contenders.append(ringContender())
    }
    return contenders
}

/// A package-benchmark scenario per contender marked `.scenario`: a run enqueues its events to a
/// held consumer (measured: the producer's cost and allocations per event), then the consumer
/// drains them in `settle()` (unmeasured) and a new held contender is built for the next run.
func backlogScenarios() -> [Scenario] {
    offThreadContenders().filter { $0.modes.contains(.scenario) }.map { contender in
        Scenario("backlog-\(contender.name)") {
            let countdown = Countdown()
            func make() -> OffThreadSubject {
                contender.make(OffThreadSetup(countdown: countdown, held: true, capacity: 1 << 16))
            }
            var subject = make()
            var waiting = 0
            return Workload(
                settle: {
                    subject.release()
                    if waiting > 0 { countdown.wait() }
                    subject.tearDown()
                    waiting = 0
                    subject = make()
                },
                finish: { subject.tearDown() }
            ) { operations in
                countdown.arm(operations)
                waiting = operations
                subject.produce(0..<operations)
            }
        }
    }
}

// MARK: - The contenders

private func eventBusContenders() -> [OffThreadContender] {
    [
        OffThreadContender(
            "atQueue EventBus", "EventBus `atQueue(q)` (serial queue)", [.backlog, .running, .latency, .scenario]
        ) { setup in
            let bus = EventBus()
            let queue = DispatchQueue(label: "consumer")
            let sink = Sink()
            let countdown = setup.countdown
            let token = bus.on(Tick.self).atQueue(queue).next { event in
                sink.take(event.value)
                countdown.tick()
            }
            let gate = Gate.holding(setup.held) { gate in queue.async { gate.block() } }
            return OffThreadSubject(gate: gate, finish: { token.dispose() }) { values in
                for i in values { bus.dispatch(Tick(value: i)) }
            }
        },
        OffThreadContender(
            "actor EventBus-isolated", "EventBus `isolated(to: actor)`", [.backlog, .running, .latency, .scenario]
        ) { setup in
            let bus = EventBus()
            let consumer = Consumer(setup.countdown)
            let token = bus.on(Tick.self).isolated(to: consumer).next { consumer, event in consumer.take(event.value) }
            let gate = Gate.holding(setup.held) { gate in Task { await consumer.hold(gate) } }
            // The bus holds the actor weakly: the subject keeps it.
            let finish = {
                token.dispose()
                withExtendedLifetime(consumer) {}
            }
            return OffThreadSubject(gate: gate, finish: finish) { values in
                for i in values { bus.dispatch(Tick(value: i)) }
            }
        },
        OffThreadContender(
            "main-actor EventBus", "EventBus `onMainActor()` (off the main thread)", [.backlog, .running, .latency]
        ) { setup in
            let bus = EventBus()
            let sink = Sink()
            let countdown = setup.countdown
            let token = bus.on(Tick.self).onMainActor().next { event in
                sink.take(event.value)
                countdown.tick()
            }
            let gate = Gate.holding(setup.held) { gate in DispatchQueue.main.async { gate.block() } }
            return OffThreadSubject(gate: gate, finish: { token.dispose() }) { values in
                for i in values { bus.dispatch(Tick(value: i)) }
            }
        },
        OffThreadContender(
            "async EventBus-events", "EventBus `events(of:)` + `for await`", [.backlog, .running, .latency, .scenario]
        ) { setup in
            let bus = EventBus()
            let stream = bus.events(of: Tick.self)
            let (gate, consumer) = consuming(stream, setup) { $0.value }
            return OffThreadSubject(gate: gate, finish: { consumer.cancel() }) { values in
                for i in values { bus.dispatch(Tick(value: i)) }
            }
        },
    ]
}

private func peerContenders() -> [OffThreadContender] {
    [
        OffThreadContender(
            "atQueue DispatchQueue.async", "`DispatchQueue.async` per event (serial queue)",
            [.backlog, .running, .latency, .scenario]
        ) { setup in
            let queue = DispatchQueue(label: "consumer")
            let sink = Sink()
            let countdown = setup.countdown
            let gate = Gate.holding(setup.held) { gate in queue.async { gate.block() } }
            return OffThreadSubject(gate: gate) { values in
                for i in values {
                    queue.async {
                        sink.take(i)
                        countdown.tick()
                    }
                }
            }
        },
        OffThreadContender(
            "async AsyncStream", "`AsyncStream` (yield + `for await`)", [.backlog, .running, .latency]
        ) { setup in
            let (stream, continuation) = AsyncStream<Int>.makeStream()
            let (gate, consumer) = consuming(stream, setup) { $0 }
            return OffThreadSubject(
                gate: gate,
                finish: {
                    continuation.finish()
                    consumer.cancel()
                }
            ) { values in
                for i in values { continuation.yield(i) }
            }
        },
        // A send waits until the consumer takes the event: no backlog, so measured running only,
        // sent from one producer task (the producer thread waits for the last delivery).
        OffThreadContender(
            "async AsyncChannel", "swift-async-algorithms `AsyncChannel` (send + `for await`)", [.running]
        ) { setup in
            let channel = AsyncChannel<Int>()
            let (gate, consumer) = consuming(channel, setup) { $0 }
            return OffThreadSubject(
                gate: gate,
                finish: {
                    channel.finish()
                    consumer.cancel()
                }
            ) { values in
                Task {
                    for i in values { await channel.send(i) }
                }
            }
        },
        OffThreadContender(
            "actor Task-per-event", "a `Task { await actor.take(e) }` per event (no order)", [.backlog, .running]
        ) { setup in
            let consumer = Consumer(setup.countdown)
            let gate = Gate.holding(setup.held) { gate in Task { await consumer.hold(gate) } }
            return OffThreadSubject(gate: gate) { values in
                for i in values { Task { await consumer.take(i) } }
            }
        },
        // The start of a plain task, one event at a time (tasks run in parallel: no backlog to count
        // with one countdown).
        OffThreadContender("Task-start", "a `Task { }` start", [.latency]) { setup in
            let sink = Sink()
            let countdown = setup.countdown
            return OffThreadSubject(gate: nil) { values in
                for i in values {
                    Task {
                        sink.take(i)
                        countdown.tick()
                    }
                }
            }
        },
    ]
}

/// The floor: a fixed-capacity ring of `Int`s (one producer, one consumer thread that takes
/// everything waiting as one batch), the same handler body.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
private func ringContender() -> OffThreadContender {
    OffThreadContender(
        "ring SPSC", "floor: a bare batched SPSC ring of `Int`s (atomics)", [.backlog, .running]
    ) { setup in
        let ring = Ring(capacity: setup.capacity)
        let sink = Sink()
        let countdown = setup.countdown
        let stopped = DispatchSemaphore(value: 0)
        func startConsumer(behind gate: Gate?) {
            Thread.detachNewThread {
                gate?.block()
                ring.consume { value in
                    sink.take(value)
                    countdown.tick()
                }
                stopped.signal()
            }
        }
        let gate = Gate.holding(setup.held) { startConsumer(behind: $0) }
        if gate == nil { startConsumer(behind: nil) }
        return OffThreadSubject(
            gate: gate,
            finish: {
                ring.stop()
                stopped.wait()
            }
        ) { values in
            for i in values { ring.push(i) }
        }
    }
}

/// Starts a task that consumes `sequence` with the shared handler body (on `value(element)`),
/// behind a gate if `setup.held`.
private func consuming<S: AsyncSequence & Sendable>(
    _ sequence: S, _ setup: OffThreadSetup, _ value: @escaping @Sendable (S.Element) -> Int
) -> (Gate?, Task<Void, Never>) where S.Failure == Never {
    let gate = setup.held ? Gate() : nil
    let sink = Sink()
    let countdown = setup.countdown
    let consumer = Task {
        await gate?.pass()
        for await element in sequence {
            sink.take(value(element))
            countdown.tick()
        }
    }
    gate?.waitUntilHeld()
    return (gate, consumer)
}

/// A single-producer, single-consumer ring of `Int`s: the producer writes a slot and publishes
/// its index; the consumer takes every published slot as one batch and publishes how far it got.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
private final class Ring: @unchecked Sendable {
    // @unchecked Sendable: a slot is written by the producer before `tail` is stored (releasing)
    // and read by the consumer after loading it (acquiring), and reused only after `head` passed
    // it; `cachedHead` is the producer's alone.
    private let slots: UnsafeMutablePointer<Int>
    private let mask: Int
    /// The next slot to take; written by the consumer.
    private let head = Atomic<Int>(0)
    /// The next slot to fill; written by the producer.
    private let tail = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    /// The producer's last view of `head`, refreshed only when the ring looks full.
    private var cachedHead = 0

    init(capacity: Int) {
        var size = 1
        while size < capacity { size <<= 1 }
        slots = .allocate(capacity: size)
        mask = size - 1
    }

    deinit { slots.deallocate() }

    @inline(__always)
    func push(_ value: Int) {
        let index = tail.load(ordering: .relaxed)
        while index &- cachedHead > mask {
            cachedHead = head.load(ordering: .acquiring)
            if index &- cachedHead > mask { sched_yield() }
        }
        slots[index & mask] = value
        tail.store(index &+ 1, ordering: .releasing)
    }

    /// Takes batches until `stop()`, yielding the thread while the ring is empty.
    func consume(_ body: (Int) -> Void) {
        var index = head.load(ordering: .relaxed)
        while true {
            let end = tail.load(ordering: .acquiring)
            if end == index {
                if stopping.load(ordering: .relaxed) { return }
                sched_yield()
                continue
            }
            while index != end {
                body(slots[index & mask])
                index &+= 1
            }
            head.store(index, ordering: .releasing)
        }
    }

    func stop() { stopping.store(true, ordering: .relaxed) }
}
