import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Battery item 6 (the RSS half; the leak half is the whole suite under LeakSanitizer in CI).
///
/// Resident memory is a property of the whole process, and Swift Testing runs suites in parallel, so
/// this test only runs when asked to (`EVENTBUS_MEMORY_TEST=1`), in a process of its own:
/// `EVENTBUS_MEMORY_TEST=1 swift test --filter MemoryTests` (CI does this). It is also skipped under
/// AddressSanitizer (`EVENTBUS_ASAN=1`), whose allocator quarantines freed memory, and where
/// /proc/self/statm does not exist. Its tests run one after the other: each measures the process.
@Suite("Reliability: memory", .serialized, .offThePool)
struct MemoryTests {
    struct Cycle: Event {
        var key: String? = nil
        var eventType: String? { key }
    }

    final class Counter: @unchecked Sendable {
        // @unchecked Sendable: used by one thread only (every handler here is synchronous).
        var value = 0
    }

    @Test(
        "1,000,000 subscribe/dispatch/dispose cycles keep resident memory within 4 MiB of the warmed-up baseline",
        .enabled(
            if: environmentFlag("EVENTBUS_MEMORY_TEST") && !underAddressSanitizer && residentBytes() != nil,
            "resident memory is per process: runs alone with EVENTBUS_MEMORY_TEST=1 (CI's memory stage), not under ASan"
        )
    )
    func steadyResidentMemory() throws {
        let cycles = environmentInt("EVENTBUS_MEMORY_CYCLES") ?? 1_000_000
        let bus = EventBus()
        let calls = Counter()
        let bag = DisposeBag()
        let longLived = bus.on(Cycle.self).next { _ in calls.value += 1 }
        func cycle(_ i: Int) {
            switch i % 4 {
            case 0:  // keyed
                let token = bus.on(Cycle.self).ofType("k").next { _ in calls.value += 1 }
                bus.dispatch(Cycle(key: "k"))
                token.dispose()
            case 1:  // owner-bound, owner released before the dispatch reclaims it
                var owner: Sentinel? = Sentinel()
                bus.on(Cycle.self).freeWith(owner).next { _, _ in calls.value += 1 }
                owner = nil
                bus.dispatch(Cycle())
            case 2:  // through a long-lived bag
                let token = bus.on(Cycle.self).next { _ in calls.value += 1 }
                token.disposed(by: bag)
                bus.dispatch(Cycle())
                token.dispose()
            default:
                let token = bus.on(Cycle.self).next { _ in calls.value += 1 }
                bus.dispatch(Cycle())
                token.dispose()
            }
        }
        let started = DispatchTime.now()
        for i in 0..<50_000 { cycle(i) }
        let baseline = try #require(residentBytes())
        var peak = baseline
        for i in 0..<cycles {
            cycle(i)
            if i % 50_000 == 0 { peak = max(peak, residentBytes() ?? 0) }
        }
        peak = max(peak, residentBytes() ?? 0)
        let growth = peak - baseline
        #expect(growth <= 4 << 20, "resident memory grew by \(growth) bytes")
        #expect(bus.subscriptionCount == 1)
        #expect(bag.count <= 1)
        #expect(calls.value >= 7 * cycles / 4)  // 2 calls per cycle, 1 when the owner died first
        longLived.dispose()
        print(
            "memory: \(cycles) cycles (+50,000 warm-up) in \(formatted(secondsSince(started))) s, \(calls.value) handler calls; "
                + "RSS baseline \(baseline >> 10) KiB, peak growth \(growth >> 10) KiB (limit 4096 KiB); bag holds \(bag.count)"
        )
    }

    @Test(
        "memory comes back after a peak: 1,000,000 keyed subscriptions in a bag, disposed but one, leave resident memory within 16 MiB of the baseline",
        .enabled(
            if: environmentFlag("EVENTBUS_MEMORY_TEST") && !underAddressSanitizer && residentBytes() != nil,
            "resident memory is per process: runs alone with EVENTBUS_MEMORY_TEST=1 (CI's memory stage), not under ASan"
        )
    )
    func peakThenRelease() throws {
        let peakCount = environmentInt("EVENTBUS_MEMORY_PEAK") ?? 1_000_000
        let bus = EventBus()
        let bag = DisposeBag()
        let calls = Counter()
        let kept = bus.on(Cycle.self).ofType("kept").next { _ in calls.value += 1 }
        func churn(_ cycles: Int) {
            for _ in 0..<cycles {
                let token = bus.on(Cycle.self).ofType("churn").next { _ in calls.value += 1 }
                token.disposed(by: bag)
                bus.dispatch(Cycle(key: "churn"))
                token.dispose()
            }
        }
        churn(10_000)
        let baseline = try #require(trimmedResidentBytes())
        // The peak: a key each (the bucket's table of keys), a slot each, a token each in the bag.
        var tokens = (0..<peakCount).map { i in bus.on(Cycle.self).ofType("k\(i)").next { _ in calls.value += 1 } }
        for token in tokens { token.disposed(by: bag) }
        let peak = residentBytes() ?? 0
        for token in tokens { token.dispose() }
        tokens = []
        churn(10_000)  // further operations: the tables finish shrinking
        let after = try #require(trimmedResidentBytes())
        let growth = after - baseline
        #expect(growth <= 16 << 20, "resident memory is \(growth >> 10) KiB above the baseline after the peak")
        #expect(bus.subscriptionCount == 1)
        #expect(bag.count == 0)
        let keySlots = bus.core.keyedCapacity(ofTypeID: ObjectIdentifier(Cycle.self))
        print(
            "memory: a peak of \(peakCount) keyed subscriptions in a bag, disposed but one: RSS baseline \(baseline >> 10) KiB, "
                + "peak +\((peak - baseline) >> 10) KiB, after +\(growth >> 10) KiB (limit 16384 KiB); "
                + "left: \(keySlots) slots of keys, \(bus.core.slotPageCount) pages of slots, room for \(bag.capacity) tokens"
        )
        kept.dispose()
    }

    actor Drain {
        var count = 0
        func take() { count += 1 }
    }

    @Test(
        "a 1,000,000-event backlog's memory comes back as it drains, while the subscriptions live: a queue, an actor, a stream",
        .enabled(
            if: environmentFlag("EVENTBUS_MEMORY_TEST") && !underAddressSanitizer && residentBytes() != nil,
            "resident memory is per process: runs alone with EVENTBUS_MEMORY_TEST=1 (CI's memory stage), not under ASan"
        )
    )
    func backlogComesBack() async throws {
        let count = environmentInt("EVENTBUS_MEMORY_BACKLOG") ?? 1_000_000
        let bus = EventBus()
        let queue = DispatchQueue(label: "memory.backlog")
        let drain = Drain()
        let delivered = Shared(0)
        let onQueue = bus.on(Cycle.self).atQueue(queue).next { _ in delivered.increment() }
        let onActor = bus.on(Cycle.self).isolated(to: drain).next { drain, _ in drain.take() }
        let stream = bus.events(of: Cycle.self)
        var iterator = stream.makeAsyncIterator()
        let baseline = try #require(trimmedResidentBytes())
        queue.suspend()
        await offThePool { for _ in 0..<count { bus.dispatch(Cycle()) } }
        let peak = residentBytes() ?? 0
        queue.resume()
        for _ in 0..<count { _ = await iterator.next() }
        #expect(await waitUntil(timeout: actorTimeout) { delivered.value == count && bus.enqueuedDeliveryCount == 0 })
        #expect(await drain.count == count)
        let after = try #require(trimmedResidentBytes())
        let growth = after - baseline
        print(
            "memory: a backlog of \(count) events to a queue, an actor and a stream: RSS baseline \(baseline >> 10) KiB, "
                + "peak +\((peak - baseline) >> 10) KiB, drained +\(growth >> 10) KiB (limit 8192 KiB)"
        )
        #expect(
            growth <= 8 << 20, "resident memory is \(growth >> 10) KiB above the baseline after the backlog drained")
        onQueue.dispose()
        onActor.dispose()
        withExtendedLifetime(stream) {}
    }

    /// The resident set size once the allocator has given free memory back to the system (glibc
    /// keeps it otherwise; elsewhere, as it is).
    private func trimmedResidentBytes() -> Int? {
        #if canImport(Glibc)
            // `malloc_trim` is glibc's (malloc.h, which the Glibc module leaves out): looked up.
            if let trim = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
                _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
            }
        #endif
        return residentBytes()
    }
}
