import Dispatch
import Foundation
import Testing

@testable import EventBus

/// What an `isolated(to:)` delivery needs from the cooperative pool, measured: the pool's threads
/// are all held on purpose, then an event is dispatched to an actor that runs on a queue of its
/// own (``QueueActorExecutor``). Run alone, on request (it holds the whole pool for seconds, which
/// would stall every other suite running beside it):
///
///     EVENTBUS_POOL_PROBE=1 .build/debug/EventBusPackageTests.xctest \
///         --testing-library swift-testing --filter PoolProbeTests
///
/// It prints what ran while the pool was held and what only after. Measured (Linux, 2 cores): a
/// plain task does not start, a hop from off the pool onto the actor runs at once, and the delivery
/// does not run until the pool is released (then within about 1 ms): the drain starts as a task
/// on the pool. That is a known issue here, for the mailbox to fix.
@Suite(
    "Probe: what an actor delivery needs from the cooperative pool",
    .enabled(if: ProcessInfo.processInfo.environment["EVENTBUS_POOL_PROBE"] == "1"), .serialized, .offThePool)
struct PoolProbeTests {
    struct Ping: Event {}

    /// An actor whose jobs run on its own queue, not on the pool.
    actor OwnQueueRecorder {
        // Static: the executor outlives every actor that runs on it.
        static let executor = QueueActorExecutor(label: "PoolProbeTests.OwnQueueRecorder")
        nonisolated var unownedExecutor: UnownedSerialExecutor { Self.executor.asUnownedSerialExecutor() }
        let received = Shared(0)
        var onOwnQueue = 0

        func start(on bus: EventBus) -> EventToken {
            bus.on(Ping.self).isolated(to: self).next { recorder, _ in
                if Self.executor.isCurrent { recorder.onOwnQueue += 1 }
                recorder.received.increment()
            }
        }

        func touch() -> Bool { Self.executor.isCurrent }
    }

    /// How the probe holds the pool's threads: asleep in a semaphore wait (Dispatch's monitor on
    /// Linux sees a sleeping worker and may start another), or running (a test that computes, or
    /// polls without sleeping: nothing replaces it).
    enum Hold: String, CaseIterable, CustomTestStringConvertible {
        case sleeping, spinning
        var testDescription: String { rawValue }
    }

    @Test("A delivery to an actor on its own queue, with every pool thread held", arguments: Hold.allCases)
    func deliveryWithThePoolHeld(hold: Hold) async {
        let bus = EventBus()
        let recorder = OwnQueueRecorder()
        let token = await recorder.start(on: bus)
        let width = ProcessInfo.processInfo.activeProcessorCount
        let release = DispatchSemaphore(value: 0)
        let released = Shared(false)
        let holding = Shared(0)
        for _ in 0..<width {
            Task.detached {
                holding.increment()
                // Holds a pool thread on purpose (this is the probe), for 20 s at most.
                switch hold {
                case .sleeping: _ = release.wait(timeout: .now() + .seconds(20))
                case .spinning:
                    let deadline = DispatchTime.now() + .seconds(20)
                    while !released.value && DispatchTime.now() < deadline {}
                }
            }
        }
        #expect(await waitUntil { holding.value == width }, "the pool's \(width) threads were not all taken")
        // Control: can a plain task start while the pool is held?
        let t0 = DispatchTime.now().uptimeNanoseconds
        func ms() -> String { String(format: "%.1f ms", Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e6) }
        print("probe: held at", ms())
        let plainTaskRan = Shared(false)
        Task.detached { plainTaskRan.withLock { $0 = true } }
        // A hop from this test (off the pool) onto the actor's queue and back.
        let hopped = await recorder.touch()
        print("probe: hopped at", ms())
        bus.dispatch(Ping())
        let deliveredWhileHeld = await waitUntil(timeout: .seconds(2)) { recorder.received.value == 1 }
        let taskRanWhileHeld = plainTaskRan.value
        #expect(hopped, "a hop onto the actor from off the pool runs on its queue, pool held or not")
        // The library's drain starts as `Task.detached` on the pool, then hops onto the actor:
        // with the pool held it does not start. When the drain starts on the actor's executor
        // instead, this known issue stops being recorded and the probe fails: drop the wrapper.
        withKnownIssue("an actor delivery needs a free pool thread to start its drain") {
            #expect(deliveredWhileHeld, "the delivery to an actor on its own queue ran while the pool was held")
        }
        print("probe: releasing at", ms())
        let releasedAt = DispatchTime.now()
        released.withLock { $0 = true }
        for _ in 0..<width { release.signal() }
        #expect(await waitUntil(timeout: actorTimeout) { recorder.received.value == 1 })
        let afterRelease = Double(DispatchTime.now().uptimeNanoseconds - releasedAt.uptimeNanoseconds) / 1e6
        #expect(await recorder.onOwnQueue == 1, "the handler ran on the actor's own queue")
        #expect(await waitUntil { bus.core.inFlight.count == 0 })
        token.dispose()
        print("probe: done at", ms())
        print(
            "pool probe (\(hold)): \(width) pool threads held; a plain task started: \(taskRanWhileHeld); a hop "
                + "onto the own-queue actor: \(hopped ? "ran on its queue" : "ran elsewhere"); the delivery to it within "
                + "2 s: \(deliveredWhileHeld ? "ran" : "did not run"); delivered \(String(format: "%.1f", afterRelease)) ms "
                + "after the pool was released")
    }
}
