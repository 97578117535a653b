import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

// Helpers and fixtures for the Swift-concurrency suites (main-actor subscribers, event streams).
// Names live under `Conc` so they cannot collide with other suites' fixtures in this module.

/// Running main-queue work from the tests, and how the main queue is serviced while they run.
///
/// Main-actor delivery from a background dispatch is enqueued on the main queue, so these tests need
/// the main queue drained while they run, and they arrange it explicitly rather than hope for it:
///
/// - **Linux (`swift test`).** The test runner's entry point ends by handing the main thread to
///   Dispatch (`dispatchMain()`): the process's main thread exits, and Dispatch drains the main
///   queue from one of its worker threads. Blocks on it run one at a time, in FIFO order, and on
///   the main actor (the main actor's executor *is* the main queue, so `MainActor.assumeIsolated`
///   holds there and Swift Testing runs `@MainActor` tests there), but **not** on the process's
///   main thread. That is why the bus decides with `isOnMainQueue` (a queue-specific value on the
///   main queue), never with the thread id; ``probe(timeout:)`` checks all of this.
/// - **Apple platforms.** The runner keeps the main thread's run loop running, which drains the
///   main queue on the main thread.
///
/// Rules the suites follow so the main queue keeps moving: a test that *waits* for the main queue
/// (``run(timeout:_:)``, ``drain(timeout:)``) never runs on the main actor itself (that would
/// deadlock; the helpers fail the test instead); a test that blocks the main queue on purpose (to
/// pile deliveries up behind a gate) does so for a bounded time; every wait has a timeout, so a
/// main queue that is not serviced fails the test with a message instead of hanging the run.
enum MainQueue {
    /// Checks that the main queue is being serviced, that a block on it counts as "on the main
    /// queue" for the bus, and may assume main-actor isolation. Records an issue and returns
    /// `false` otherwise.
    @discardableResult
    static func probe(timeout: DispatchTimeInterval = defaultTimeout) -> Bool {
        let seen = run(timeout: timeout) { isOnMainQueue }
        guard let seen else { return false }
        #expect(seen, "a block on the main queue must satisfy isOnMainQueue")
        return seen
    }

    /// Runs `body` on the main queue, on the main actor, and waits for its result; `nil` (and a
    /// recorded issue) if it did not run within `timeout`. Must not be called on the main queue.
    static func run<T: Sendable>(
        timeout: DispatchTimeInterval = defaultTimeout,
        _ body: @escaping @MainActor @Sendable () -> T
    ) -> T? {
        guard !isOnMainQueue else {
            Issue.record("MainQueue.run called on the main queue: it would wait for itself")
            return nil
        }
        requireOffThePool("MainQueue.run")
        let result = Shared<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.main.async {
            // A block of the main queue runs on the main actor.
            let value = MainActor.assumeIsolated { body() }
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else {
            Issue.record("the main queue did not run a block within the timeout: is it serviced? (see MainQueue)")
            return nil
        }
        return result.value
    }

    /// Waits until every block enqueued on the main queue before this call has run.
    @discardableResult
    static func drain(timeout: DispatchTimeInterval = defaultTimeout) -> Bool {
        run(timeout: timeout) { () } != nil
    }

    /// Blocks the main queue until the returned gate is opened (or `timeout` passes), so that
    /// deliveries dispatched meanwhile from other threads pile up behind it. Returns once the main
    /// queue is actually blocked.
    static func block(timeout: DispatchTimeInterval = defaultTimeout) -> MainQueueGate {
        requireOffThePool("MainQueue.block")
        let gate = MainQueueGate()
        let entered = DispatchSemaphore(value: 0)
        DispatchQueue.main.async {
            entered.signal()
            gate.opened = gate.semaphore.wait(timeout: .now() + timeout) == .success
        }
        let blocked = entered.wait(timeout: .now() + timeout) == .success
        #expect(blocked, "the main queue did not start the gate block: is it serviced? (see MainQueue)")
        return gate
    }
}

/// A block that holds the main queue until ``open()``; see ``MainQueue/block(timeout:)``.
final class MainQueueGate: @unchecked Sendable {
    // @unchecked Sendable: `semaphore` is thread-safe; `opened` is written on the main queue before
    // the gate block ends and read only after draining the main queue (which orders the accesses).
    let semaphore = DispatchSemaphore(value: 0)
    var opened = false

    /// Lets the main queue go on; returns once everything enqueued meanwhile has run.
    @discardableResult
    func open() -> Bool {
        semaphore.signal()
        return MainQueue.drain() && opened
    }
}

/// Async waits with timeouts (they suspend, never block a cooperative thread).
enum AsyncWait {
    /// Awaits `operation`, or gives up after `seconds`: then returns `nil` and records an issue (and
    /// cancels the task running `operation`, which may not stop: awaiting another task's `value`,
    /// for one, ignores cancellation, so this never waits for `operation` past the timeout).
    ///
    /// Needs no thread of the cooperative pool itself: `operation` runs in a task on
    /// ``OffThePoolExecutor`` and the timeout is a timer on ``timerQueue``, so a pool that other
    /// work keeps busy delays only what `operation` itself waits for.
    static func value<T: Sendable>(
        within seconds: UInt64 = 10,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ operation: @escaping @Sendable () async -> T
    ) async -> T? {
        let waiter = Shared<CheckedContinuation<T?, Never>?>(nil)
        let timedOut = Shared(false)
        /// Resumes the waiter with the first result only; `nil` from the timer marks the timeout.
        @Sendable func finish(_ value: T?, timingOut: Bool = false) -> Bool {
            guard
                let first = waiter.withLock({ state in
                    defer { state = nil }
                    if state != nil && timingOut { timedOut.withLock { $0 = true } }
                    return state
                })
            else { return false }
            first.resume(returning: value)
            return true
        }
        let result = await withCheckedContinuation { continuation in
            waiter.withLock { $0 = continuation }
            let work = Task(executorPreference: OffThePoolExecutor.shared) { _ = finish(await operation()) }
            timerQueue.asyncAfter(deadline: .now() + .seconds(Int(seconds))) {
                if finish(nil, timingOut: true) { work.cancel() }
            }
        }
        if timedOut.value { Issue.record("timed out after \(seconds) s", sourceLocation: sourceLocation) }
        return result
    }
}

/// Fixtures of the concurrency suites.
enum Conc {
    /// An event stamped with the thread that dispatched it and its rank on that thread.
    struct Tick: Event, Equatable {
        var thread = 0
        var seq: Int
        var key: String?
        var eventType: String? { key }
    }

    /// An event that carries an object, to observe whether a buffer still holds it.
    struct Carrier: Event {
        let payload: Sentinel
    }

    struct Renamed: Event {
        let name: String
    }

    /// Main-actor state, as a view model or view controller holds it.
    @MainActor
    final class ViewModel: EventSubscribing {
        var title = ""
        var titles: [String] = []

        nonisolated init() {}
    }

    /// A main-actor log of what handlers received, and whether each ran on the main queue.
    @MainActor
    final class Log<Entry: Sendable> {
        var entries: [Entry] = []
        var offMainQueue = 0

        init() {}

        func record(_ entry: Entry) {
            if !isOnMainQueue { offMainQueue += 1 }
            entries.append(entry)
        }
    }

    /// A plain owner for owner-bound subscriptions.
    final class Owner: EventSubscribing, Sendable {
        init() {}
    }

    /// Consumes `stream` in a task until it finishes (or `limit` elements), returning what it got.
    /// The caller keeps no reference to the stream, so its lifetime is the task's.
    static func consume(
        _ stream: EventStream<Tick>,
        limit: Int = .max,
        onEach: @escaping @Sendable (Tick) -> Void = { _ in }
    ) -> Task<[Tick], Never> {
        Task {
            var seen: [Tick] = []
            for await tick in stream {
                seen.append(tick)
                onEach(tick)
                if seen.count == limit { break }
            }
            return seen
        }
    }
}

/// A serial executor that runs an actor's jobs on a dispatch queue of its own (a thread of the
/// overcommit pool, not the cooperative pool): a hop onto an actor that uses it needs no pool
/// thread. Keep it in a `static let`: the runtime refers to an actor's executor unowned, so the
/// executor must outlive every actor that runs on it (an actor that owned it could free it while
/// its last job still runs there).
final class QueueActorExecutor: SerialExecutor {
    private let queue: DispatchQueue
    private let key = DispatchSpecificKey<Bool>()

    init(label: String) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: key, value: true)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    /// Whether the caller runs on this executor's queue.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}
