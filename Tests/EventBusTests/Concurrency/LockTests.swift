import Dispatch
import Testing

@testable import EventBus

/// The mutex every shared structure of the bus uses (`Locked`): on Linux a futex word taken and
/// released inline, the kernel only asked when threads contend.
@Suite("Lock: the bus's mutex excludes, wakes its waiters, and refuses re-entrance")
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
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
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
        DispatchQueue.global().async {
            lock.withLock { value in
                taken.signal()
                _ = release.wait(timeout: .now() + defaultTimeout)
                value = 1
            }
        }
        #expect(taken.wait(timeout: .now() + defaultTimeout) == .success)
        DispatchQueue.global().async {
            lock.withLock { $0 += 10 }  // waits for the holder, asleep
            done.signal()
        }
        usleepMilliseconds(50)  // lets the second thread reach the wait
        release.signal()
        #expect(done.wait(timeout: .now() + defaultTimeout) == .success)
        #expect(lock.withLock { $0 } == 11)
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
