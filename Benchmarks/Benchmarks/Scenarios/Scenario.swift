// The scenarios both executables run: `EventBusBenchmarks` (package-benchmark: wall clock and
// allocations) and `EventBusInstructions` (one scenario under callgrind: instructions per
// operation). One definition each, so both measure the same code.
//
// A scenario builds its state (the subscribers, unmeasured) and returns a workload that performs a
// given number of operations: publishes, subscribe+dispose pairs, ...

import Dispatch
import EventBus
import Foundation

/// A named benchmark scenario for one contender.
public struct Scenario: Sendable {
    /// "<scenario>_<contender>", e.g. "publish_N=1_EventBus"; the chart script parses these names.
    public let name: String
    let make: @Sendable () -> Workload

    /// `name` is written with spaces, which become underscores: package-benchmark stores threshold
    /// files under the name with spaces replaced, but looks them up by the name as is.
    init(_ name: String, make: @escaping @Sendable () -> Workload) {
        self.name = name.replacingOccurrences(of: " ", with: "_")
        self.make = make
    }

    /// Builds the scenario's state and returns its workload.
    public func makeWorkload() -> Workload { make() }
}

/// A scenario's state, ready to perform operations.
public final class Workload {
    private let body: (Int) -> Void
    private let after: () -> Void
    private let finish: () -> Void

    /// `settle` is what a run leaves to be done unmeasured before the next: the backlog scenarios
    /// (OffThread.swift) measure the enqueue alone and let their consumer drain in it.
    init(settle: @escaping () -> Void = {}, finish: @escaping () -> Void = {}, _ body: @escaping (Int) -> Void) {
        self.body = body
        self.after = settle
        self.finish = finish
    }

    /// Performs `operations` operations (publishes, subscribe+dispose pairs, ...).
    public func run(_ operations: Int) { body(operations) }

    /// Does, unmeasured, what the last `run` left (a backlog scenario's drain); call it after
    /// each run, outside the measured region.
    public func settle() { after() }

    /// Releases what the scenario holds outside itself (observers on the main actor, tasks).
    public func tearDown() { finish() }
}

/// Every scenario, in report order.
public let allScenarios: [Scenario] =
    publishScenarios() + keyedScenarios() + subscribeScenarios() + ownerChurnScenarios()
    + enqueuedScenarios() + actorScenarios() + backlogScenarios() + contentionScenarios() + policyScenarios()
    + chainScenarios()

// MARK: - What every contender shares

/// The event every contender publishes.
struct Tick: Event {
    let value: Int
}

/// A second event type, for "two threads dispatching different types".
struct Tock: Event {
    let value: Int
}

/// An event routed by a key (`ofType` on EventBus, a notification name on NotificationCenter).
struct Routed: Event {
    let value: Int
    let key: String
    var eventType: String? { key }
}

/// Where every handler puts what it received, so the work cannot be optimised away.
///
/// @unchecked Sendable: in every scenario a sink is written by one thread at a time (synchronous
/// handlers run on the publishing thread, queued ones on one serial consumer).
final class Sink: @unchecked Sendable {
    var total = 0
    /// The handler body shared by all contenders.
    @inline(never)
    func take(_ value: Int) { total &+= value }
}

/// An object a subscription is bound to (`freeWith`).
final class Owner: Sendable {
    let sink: Sink
    init(sink: Sink) { self.sink = sink }
}

/// The userInfo key NotificationCenter contenders carry the payload under.
let valueKey = "value"

/// Notification names: one for `Tick`, one for `Tock`.
let tickName = Notification.Name("Tick")
let tockName = Notification.Name("Tock")

/// The subject Foundation's typed messages are posted for.
final class MessageSubject: Sendable {}

/// Runs `body` on the main actor and waits for it, from a (non-main) benchmark thread.
///
/// Under both executables the main thread drains the main queue (async `main`), so this is the
/// main actor.
func runOnMainActor<T: Sendable>(_ body: @MainActor () -> T) -> T {
    DispatchQueue.main.sync { MainActor.assumeIsolated(body) }
}

/// A "the last of N deliveries happened" latch for a single serial consumer.
final class Countdown: @unchecked Sendable {
    // @unchecked Sendable: `remaining` is written by the publisher before the deliveries are
    // enqueued (happens-before through the queue) and then only by the one serial consumer.
    private var remaining = 0
    private let done = DispatchSemaphore(value: 0)
    /// When the last delivery was counted (`DispatchTime` nanoseconds): read after `wait()`.
    private(set) var finishedAt: UInt64 = 0

    func arm(_ count: Int) { remaining = count }

    @inline(__always)
    func tick() {
        remaining -= 1
        if remaining == 0 {
            finishedAt = DispatchTime.now().uptimeNanoseconds
            done.signal()
        }
    }

    func wait() { done.wait() }
}

/// A countdown that several threads may tick at once (deliveries on a concurrent pool).
final class LockedCountdown: @unchecked Sendable {
    // @unchecked Sendable: `remaining` is guarded by `lock`.
    private let lock = NSLock()
    private var remaining = 0
    private let done = DispatchSemaphore(value: 0)

    func arm(_ count: Int) { lock.withLock { remaining = count } }

    func tick() {
        let finished = lock.withLock {
            remaining -= 1
            return remaining == 0
        }
        if finished { done.signal() }
    }

    func wait() { done.wait() }
}

/// Carries a value the compiler cannot prove Sendable into a `@Sendable` closure.
///
/// @unchecked Sendable: used only for OpenCombine subjects, which lock internally.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
}

/// Keeps `value` alive as far as the optimiser knows (for handlers shared by two threads, which
/// must not write a common sink).
@inline(never)
func consume(_ value: Int) {
    withExtendedLifetime(value) {}
}
