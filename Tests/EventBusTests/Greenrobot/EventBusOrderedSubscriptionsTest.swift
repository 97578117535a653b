import Dispatch
import Testing

@testable import EventBus

// Port of greenrobot's EventBusOrderedSubscriptionsTest
// (EventBusTestJava/src/main/java/org/greenrobot/eventbus/EventBusOrderedSubscriptionsTest.java).
//
// Adapted: greenrobot priorities are Ints, ours are three levels; the Java priorities map as
// 10 and 1 → .high, 0 → .normal, -1 and -100 → .low, and within a level subscription order holds
// (so the expected call order is exact, not just "non-increasing"). ThreadMode.MAIN maps to
// `onMainActor()`, ThreadMode.BACKGROUND to `atQueue(serial queue)` (the priority orders the
// enqueueing, and a serial queue runs them in that order). The `sticky = true` variants subscribe
// with `replayingSticky()` and, as in Java, then post a plain event.
extension Greenrobot {
    @Suite("EventBusOrderedSubscriptionsTest (greenrobot)", .offThePool)
    struct EventBusOrderedSubscriptionsTest {
        /// Greenrobot's priority, as one of our levels.
        static func level(_ javaPriority: Int) -> EventPriority {
            javaPriority > 0 ? .high : javaPriority == 0 ? .normal : .low
        }

        /// Greenrobot's `Integer` events (ThreadMode.BACKGROUND subscribers).
        struct IntegerEvent: Event { var value: Int }

        enum ThreadMode { case posting, main, background }

        /// Greenrobot's `PrioSubscriber.handleEvent`: records the Java priority of each call, and the
        /// first out-of-order call (`fail`).
        final class PrioRecorder: Sendable {
            let tracker = GreenrobotTracker()
            private let state = Shared<(calls: [Int], lastRank: Int, fail: String?)>(([], -1, nil))

            var calls: [Int] { state.value.calls }
            var fail: String? { state.value.fail }

            func handleEvent(_ javaPriority: Int, _ event: some Sendable) {
                let rank = EventBusOrderedSubscriptionsTest.level(javaPriority).rank
                state.withLock { state in
                    if rank < state.lastRank, state.fail == nil {
                        state.fail = "Called prio \(javaPriority) after rank \(state.lastRank)"
                    }
                    state.lastRank = rank
                    state.calls.append(javaPriority)
                }
                tracker.track(event)
            }
        }

        /// Subscribes one handler per Java priority, in the order given (the order of the Java
        /// methods), each delivered as `mode` says.
        @discardableResult
        static func register<E: Event>(
            _ type: E.Type, priorities: [Int], mode: ThreadMode, sticky: Bool, on bus: EventBus,
            queue: DispatchQueue, recorder: PrioRecorder
        ) -> [EventToken] {
            priorities.map { javaPriority in
                var maker = bus.on(type).priority(level(javaPriority))
                if sticky { maker = maker.replayingSticky() }
                switch mode {
                case .posting:
                    return maker.next { event in recorder.handleEvent(javaPriority, event) }
                case .main:
                    return maker.onMainActor().next { event in recorder.handleEvent(javaPriority, event) }
                case .background:
                    return maker.atQueue(queue).next { event in recorder.handleEvent(javaPriority, event) }
                }
            }
        }

        /// Greenrobot's `runTestOrdered`.
        func runTestOrdered<E: Event>(
            _ event: E, mode: ThreadMode, sticky: Bool, priorities: [Int], expectedOrder: [Int]
        ) {
            let bus = EventBus()
            let recorder = PrioRecorder()
            let queue = DispatchQueue(label: "greenrobot.background")
            let tokens = Self.register(
                E.self, priorities: priorities, mode: mode, sticky: sticky, on: bus, queue: queue, recorder: recorder)
            bus.dispatch(event)

            #expect(recorder.tracker.waitForEventCount(expectedOrder.count, timeout: .seconds(10)))
            #expect(recorder.fail == nil)
            #expect(recorder.calls == expectedOrder)
            #expect(recorder.tracker.eventCount == expectedOrder.count)

            for token in tokens { token.dispose() }
            #expect(bus.subscriptionCount == 0)
        }

        // The Java methods' declaration order: P1, M1, P0, P10, M100 (String), M1, P0, P1 (main),
        // P1, P0, M1 (background; reordered here to M1, P1, P0 so that subscription order alone
        // would fail the test).
        static let postingPriorities = [1, -1, 0, 10, -100]
        static let postingOrder = [1, 10, 0, -1, -100]
        static let mainPriorities = [-1, 0, 1]
        static let backgroundPriorities = [-1, 1, 0]
        static let threeOrder = [1, 0, -1]

        @Test func testOrdered() {
            runTestOrdered(
                StringEvent("42"), mode: .posting, sticky: false, priorities: Self.postingPriorities,
                expectedOrder: Self.postingOrder)
        }

        @Test func testOrderedMainThread() {
            runTestOrdered(
                IntTestEvent(42), mode: .main, sticky: false, priorities: Self.mainPriorities,
                expectedOrder: Self.threeOrder)
        }

        @Test func testOrderedBackgroundThread() {
            runTestOrdered(
                IntegerEvent(value: 42), mode: .background, sticky: false, priorities: Self.backgroundPriorities,
                expectedOrder: Self.threeOrder)
        }

        @Test func testOrderedSticky() {
            runTestOrdered(
                StringEvent("42"), mode: .posting, sticky: true, priorities: Self.postingPriorities,
                expectedOrder: Self.postingOrder)
        }

        @Test func testOrderedMainThreadSticky() {
            runTestOrdered(
                IntTestEvent(42), mode: .main, sticky: true, priorities: Self.mainPriorities,
                expectedOrder: Self.threeOrder)
        }

        @Test func testOrderedBackgroundThreadSticky() {
            runTestOrdered(
                IntegerEvent(value: 42), mode: .background, sticky: true, priorities: Self.backgroundPriorities,
                expectedOrder: Self.threeOrder)
        }

        // Beyond the Java test (same fixture): a sticky post is delivered live in priority order too,
        // while the replay to a later subscriber is per subscriber (so subscription order).
        @Test func testOrderedStickyPostThenLateSubscribers() {
            let bus = EventBus()
            let recorder = PrioRecorder()
            let queue = DispatchQueue(label: "greenrobot.background")
            Self.register(
                StringEvent.self, priorities: Self.postingPriorities, mode: .posting, sticky: true, on: bus,
                queue: queue, recorder: recorder)
            bus.dispatch(StringEvent("42"), sticky: .latest)
            #expect(recorder.calls == Self.postingOrder)

            let late = PrioRecorder()
            Self.register(
                StringEvent.self, priorities: [-1, 1], mode: .posting, sticky: true, on: bus, queue: queue,
                recorder: late)
            #expect(late.calls == [-1, 1], "each replay happens when its subscriber subscribes")
            #expect(recorder.calls == Self.postingOrder, "the earlier subscribers are not replayed to")
        }
    }
}
