import Dispatch
import Foundation
import Testing

@testable import EventBus
@testable import EventBusFoundation

// Shared helpers for every suite. Every cross-thread wait here has a timeout, so a lost event or a
// deadlock fails the test instead of hanging the run.

/// The longest any single wait in the suite may block.
let defaultTimeout: DispatchTimeInterval = .seconds(10)

/// The longest a test waits for work that needs the cooperative pool: deliveries to an actor (a
/// drain starts as a task there), a stream's consuming task. The pool has as many threads as
/// cores. The tests no longer run on it (`OffThePool.swift`): before, two long synchronous tests
/// held both of CI's 2 threads for 21 s, and three actor tests once waited 136 s behind such
/// tests. What is left is CPU: the sanitizer stages share 2 cores with everything else, so this
/// stays generous.
let actorTimeout: DispatchTimeInterval = .seconds(90)

/// A value shared between a test and handlers running on other threads.
final class Shared<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only reached through `withLock`, which holds the lock.
    private let state: Locked<Value>

    init(_ value: Value) { state = Locked(value) }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R { try state.withLock(body) }

    var value: Value { withLock { $0 } }
}

extension Shared where Value == [String] {
    func append(_ entry: String) { withLock { $0.append(entry) } }
}

extension Shared where Value == Int {
    func increment(by amount: Int = 1) { withLock { $0 += amount } }
}

/// Polls `condition` every millisecond until it is true or `timeout` passes; returns whether it
/// became true. The suite's one polling helper: blocking here, suspending in its async form below.
@discardableResult
func waitUntil(timeout: DispatchTimeInterval = defaultTimeout, _ condition: () -> Bool) -> Bool {
    requireOffThePool("waitUntil (the blocking one)")
    let deadline = DispatchTime.now() + timeout
    while !condition() {
        if DispatchTime.now() > deadline { return false }
        pause(milliseconds: 1)
    }
    return true
}

/// ``waitUntil(timeout:_:)`` for async tests: suspends between checks, so that the main actor and
/// the cooperative pool stay free to run what the test waits for.
@discardableResult
func waitUntil(timeout: DispatchTimeInterval = defaultTimeout, _ condition: () -> Bool) async -> Bool {
    let deadline = DispatchTime.now() + timeout
    while !condition() {
        if DispatchTime.now() > deadline { return false }
        await suspend(milliseconds: 1)
    }
    return true
}

/// Suspends the calling task for `milliseconds`, woken by a timer on a queue of the suite's own.
/// Not `Task.sleep`: its timer fires on the cooperative pool (a task executor cannot schedule
/// one), so each wake-up would wait for a free pool thread, the very thing a test of actor
/// deliveries must not depend on; the task resumes on its own executor (see OffThePool.swift).
func suspend(milliseconds: Int) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        timerQueue.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { continuation.resume() }
    }
}

/// The queue whose timers wake ``suspend(milliseconds:)`` and ``AsyncWait`` (a thread of
/// Dispatch's overcommit pool).
let timerQueue = DispatchQueue(label: "EventBusTests.timers")

/// Waits until every block enqueued on `queue` before this call has run.
func drain(_ queue: DispatchQueue, timeout: DispatchTimeInterval = defaultTimeout) -> Bool {
    requireOffThePool("drain(_:)")
    let done = DispatchSemaphore(value: 0)
    queue.async { done.signal() }
    return done.wait(timeout: .now() + timeout) == .success
}

/// Runs `body` on a new thread and waits for it (with a timeout); returns whether it finished.
@discardableResult
func onAnotherThread(timeout: DispatchTimeInterval = defaultTimeout, _ body: @escaping @Sendable () -> Void) -> Bool {
    requireOffThePool("onAnotherThread")
    let done = DispatchSemaphore(value: 0)
    Thread.detach {
        body()
        done.signal()
    }
    return done.wait(timeout: .now() + timeout) == .success
}

/// Runs `body` on a new thread with a stack of `stackSize` bytes and waits for it (with a
/// timeout); returns whether it finished.
@discardableResult
func onThread(
    stackSize: Int, timeout: DispatchTimeInterval = defaultTimeout, _ body: @escaping @Sendable () -> Void
) -> Bool {
    requireOffThePool("onThread(stackSize:)")
    let done = DispatchSemaphore(value: 0)
    let thread = Foundation.Thread {
        body()
        done.signal()
    }
    thread.stackSize = stackSize
    thread.start()
    return done.wait(timeout: .now() + timeout) == .success
}

/// Runs `count` copies of `body` concurrently, each on its own thread, and waits for all.
@discardableResult
func concurrently(
    _ count: Int, timeout: DispatchTimeInterval = defaultTimeout, _ body: @escaping @Sendable (Int) -> Void
) -> Bool {
    requireOffThePool("concurrently")
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread.detach {
            body(index)
            group.leave()
        }
    }
    return group.wait(timeout: .now() + timeout) == .success
}

/// Runs `body`, which blocks (waits for threads, loops for long), on a thread of its own and awaits
/// its result: an async test that blocked the cooperative pool (2 threads on a 2-core machine) would
/// starve the actors and tasks that other tests, and its own, wait for.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detach { continuation.resume(returning: body()) }
    }
}

/// Blocks the calling thread for `milliseconds` (a slow handler, a pause between two steps).
func usleepMilliseconds(_ milliseconds: Int, sourceLocation: SourceLocation = #_sourceLocation) {
    requireOffThePool("usleepMilliseconds", sourceLocation: sourceLocation)
    pause(milliseconds: milliseconds)
}

private func pause(milliseconds: Int) {
    let done = DispatchSemaphore(value: 0)
    _ = done.wait(timeout: .now() + .milliseconds(milliseconds))
}

/// Starts real threads without Foundation (Dispatch's pool would reuse a few threads).
enum Thread {
    static func detach(_ body: @escaping @Sendable () -> Void) {
        DispatchQueue(label: "EventBusTests.thread").async(execute: body)
    }
}

/// An object whose deallocation a test can observe through a weak reference.
final class Sentinel: @unchecked Sendable {
    // @unchecked Sendable: no mutable state.
    init() {}
}

/// Subscribes, through `subscribe`, a handler that captures a fresh `Sentinel`, and returns a test
/// of whether that sentinel, and so the handler, is still alive.
///
/// ```swift
/// let handlerAlive = subscribeCapturingSentinel { bus.on(Ping.self).freeWith(owner).next($0) }
/// ```
func subscribeCapturingSentinel<E: Event>(_ subscribe: (@escaping @Sendable (E) -> Void) -> Void) -> () -> Bool {
    let sentinel = Sentinel()
    let watch = WeakReference(sentinel)
    subscribe { _ in withExtendedLifetime(sentinel) {} }
    return { watch.object != nil }
}

/// A weak reference that can be captured (a local `weak let` would need Swift 6.2).
final class WeakReference: @unchecked Sendable {
    // @unchecked Sendable: `object` is written only in init; weak loads are thread-safe.
    weak var object: AnyObject?

    init(_ object: AnyObject) { self.object = object }
}

extension SubscriberMaker where Delivery == EventDelivery.Synchronous, Owner == Never {
    /// `next` on this maker, or on `atQueue(queue)` when a queue is given: for tests that choose the
    /// delivery at run time (the two makers have different types).
    @discardableResult
    func next(on queue: DispatchQueue?, _ handler: @escaping @Sendable (E) -> Void) -> EventToken {
        if let queue { return atQueue(queue).next(handler) }
        return next(handler)
    }
}
