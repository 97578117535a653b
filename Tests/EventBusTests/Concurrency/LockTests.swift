import Dispatch
import Testing

@testable import EventBus

/// The mutex every shared structure of the bus uses (`Locked`): on Linux a futex word taken and
/// released inline, the kernel only asked when threads contend.
@Suite(
    "Lock: the bus's mutex excludes, wakes its waiters, lets a waiter in, and refuses re-entrance", .tags(.stress),
    .offThePool)
struct LockTests {
    /// A counter that is not atomic: only the lock keeps its increments from being lost.
    final class Counter: @unchecked Sendable {
        // @unchecked Sendable: `value` and `inside` are only touched under the lock under test.
        var value = 0
        var inside = 0
        var overlaps = 0
    }

    @Test("Threads contending for one lock each hold it alone, and no increment made under it is lost")
    func contendedLockExcludes() {
        let lock = Locked(0)
        let counter = Counter()
        let threads = 8
        let rounds = 50_000
        let finished = concurrently(threads, timeout: actorTimeout) { _ in
            for round in 0..<rounds {
                lock.withLock { holds in
                    counter.inside += 1
                    if counter.inside != 1 { counter.overlaps += 1 }
                    counter.value += 1
                    holds += 1
                    counter.inside -= 1
                }
                // Now and then, let another thread in while this one waits: the contended path
                // (sleeping in the kernel, woken by the unlock) runs as well as the inline one.
                if round % 1_000 == 0 { Locked<Int>.yieldToWaiters() }
            }
        }
        #expect(finished)
        let holds = lock.withLock { $0 }
        print("lock: \(threads) threads took one lock \(holds) times; overlaps seen: \(counter.overlaps)")
        #expect(counter.overlaps == 0)
        #expect(counter.value == threads * rounds)
        #expect(holds == threads * rounds)
    }

    @Test("A thread waiting for the lock is woken when the holder releases it")
    func waiterIsWoken() {
        let lock = Locked(0)
        let taken = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detach {
            lock.withLock { value in
                taken.signal()
                _ = release.wait(timeout: .now() + defaultTimeout)
                value = 1
            }
        }
        #expect(taken.wait(timeout: .now() + defaultTimeout) == .success)
        Thread.detach {
            lock.withLock { $0 += 10 }  // waits for the holder, asleep
            done.signal()
        }
        usleepMilliseconds(50)  // lets the second thread reach the wait
        release.signal()
        #expect(done.wait(timeout: .now() + defaultTimeout) == .success)
        #expect(lock.withLock { $0 } == 11)
    }

    /// Whether the lock starves a waiter: on Linux it is a futex word with no queue of its own
    /// (`Lock.swift` says why it is kept), so a thread that takes it back right after releasing it
    /// could win again and again. A waiter spins briefly before it sleeps, which lets it in while
    /// the holder is between two critical sections (EventBusLatency's churn phase measures the
    /// wait's distribution; this test bounds the longest one).
    @Test("A thread waiting for the lock gets it within a bounded wait while another takes it in a tight loop")
    func waiterIsNotStarved() {
        let lock = Locked(0)
        let stop = Locked(false)
        let churned = Shared(0)
        let churnerDone = Shared(false)
        // The churning thread stops by itself after `churnLimit`: a starved waiter then gets the
        // lock that late and fails the bound below, instead of hanging the run.
        let churnLimit: UInt64 = 5_000_000_000
        Thread.detach {
            let deadline = DispatchTime.now().uptimeNanoseconds + churnLimit
            // Takes and releases the lock with no pause between, as a thread subscribing and
            // disposing in a loop does.
            while !stop.withLock({ $0 }) && DispatchTime.now().uptimeNanoseconds < deadline {
                for _ in 0..<64 { lock.withLock { $0 &+= 1 } }
                churned.increment(by: 64)
            }
            churnerDone.withLock { $0 = true }
        }
        // Measures only once the churning thread is at it (a thread started is not yet running:
        // measured before, the waits prove nothing).
        #expect(waitUntil { churned.value > 0 }, "the churning thread did not start")
        let attempts = 2_000
        var longest: UInt64 = 0
        var total: UInt64 = 0
        for _ in 0..<attempts {
            let asked = DispatchTime.now().uptimeNanoseconds
            lock.withLock { $0 &+= 1 }
            let waited = DispatchTime.now().uptimeNanoseconds - asked
            longest = max(longest, waited)
            total += waited
        }
        stop.withLock { $0 = true }
        // Generous: with the whole suite running in parallel on two cores, a thread may wait
        // seconds for a core.
        let finished = waitUntil(timeout: .seconds(60)) { churnerDone.value }
        print(
            "lock fairness: \(attempts) acquisitions beside \(churned.value) by a churning thread; "
                + "mean wait \(total / UInt64(attempts) / 1_000) µs, longest \(longest / 1_000) µs")
        // A liveness bound, not a performance goal (that lives in EventBusLatency): far above a
        // preempted thread's wait on a loaded machine, below a starved waiter's (`churnLimit`).
        #expect(longest < churnLimit / 2, "a waiter waited \(longest / 1_000_000) ms for the lock")
        #expect(finished, "the churning thread did not finish")
    }

    #if DEBUG
        @Test("Debug builds: taking a lock again on the thread that holds it stops the process with a message")
        func reentranceTraps() async {
            await #expect(processExitsWith: .failure) {
                let lock = Locked(0)
                lock.withLock { _ in lock.withLock { _ in } }
            }
        }
    #endif
}
