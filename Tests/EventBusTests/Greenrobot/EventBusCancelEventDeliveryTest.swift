import Testing

@testable import EventBus

// Port of greenrobot's EventBusCancelEventDeliveryTest (and the Android-only
// EventBusAndroidCancelEventDeliveryTest).
//
// Adapted: `cancelEventDelivery(event)` is our `handle { _ in .stop }`. Greenrobot priorities are
// Ints, ours three levels: each test maps the Java priorities it uses onto .high/.normal/.low,
// keeping their order. "unregister" is disposing the subscriber's DisposeBag.
//
// Skipped:
// - testCancelOutsideEventHandler: `.stop` is a handler's return value, so stopping outside a
//   handler cannot be written (no runtime error to test).
// - testCancelWrongEvent: the returned `.stop` always applies to the event being handled; there
//   is no way to name another event.
// - testCancelInMainThread (Android): a main-thread subscriber cannot stop a dispatch; `handle`
//   after `onMainActor()` is a compile error, not a runtime EventBusException.
extension Greenrobot {
    @Suite("EventBusCancelEventDeliveryTest (greenrobot)", .offThePool)
    struct EventBusCancelEventDeliveryTest {
        /// Greenrobot's `Subscriber(prio, cancel)`: one handler per Java priority, of which only the
        /// one matching `prio` tracks the event (and, if `cancel`, stops the dispatch).
        final class Subscriber: Sendable {
            let prio: Int
            let cancel: Bool
            let tracker: GreenrobotTracker
            let bag = DisposeBag()

            init(_ prio: Int, _ cancel: Bool, tracker: GreenrobotTracker) {
                self.prio = prio
                self.cancel = cancel
                self.tracker = tracker
            }

            /// Greenrobot's `register`: `onEvent`, `onEvent1`, ... at their levels.
            func register(on bus: EventBus, levels: [(javaPriority: Int, level: EventPriority)]) {
                for (javaPriority, level) in levels {
                    bus.on(StringEvent.self).priority(level).handle { [self] event in
                        handleEvent(event, javaPriority)
                    }.disposed(by: bag)
                }
            }

            /// Greenrobot's `unregister`.
            func unregister() { bag.dispose() }

            private func handleEvent(_ event: StringEvent, _ javaPriority: Int) -> EventPropagation {
                guard prio == javaPriority else { return .continue }
                tracker.track(event)
                return cancel ? .stop : .continue
            }
        }

        @Test func testCancel() {
            let bus = EventBus()
            let tracker = GreenrobotTracker()
            // Java priorities 0 and 1 (2 and 3 track nothing in this test).
            let levels: [(javaPriority: Int, level: EventPriority)] = [(0, .normal), (1, .high)]
            let canceler = Subscriber(1, true, tracker: tracker)
            let first = Subscriber(0, false, tracker: tracker)
            let last = Subscriber(0, false, tracker: tracker)
            first.register(on: bus, levels: levels)
            canceler.register(on: bus, levels: levels)
            last.register(on: bus, levels: levels)
            bus.dispatch(StringEvent("42"))
            #expect(tracker.eventCount == 1)

            canceler.unregister()
            bus.dispatch(StringEvent("42"))
            #expect(tracker.eventCount == 1 + 2)
            withExtendedLifetime((first, last)) {}
        }

        @Test func testCancelInBetween() {
            let bus = EventBus()
            let tracker = GreenrobotTracker()
            let levels: [(javaPriority: Int, level: EventPriority)] = [(1, .low), (2, .normal), (3, .high)]
            let subscribers = [
                Subscriber(2, true, tracker: tracker),
                Subscriber(1, false, tracker: tracker),
                Subscriber(3, false, tracker: tracker),
            ]
            for subscriber in subscribers { subscriber.register(on: bus, levels: levels) }
            bus.dispatch(StringEvent("42"))
            #expect(tracker.eventCount == 2)
            #expect(tracker.lastEvent == "42")
        }

        // Beyond the Java test: what cancelling does not touch.
        @Test func testCancelDoesNotAffectTheNextPost() {
            let bus = EventBus()
            let calls = Shared(0)
            let stopNext = Shared(true)
            _ = bus.on(StringEvent.self).priority(.high).handle { _ in
                stopNext.withLock { stop in
                    defer { stop = false }
                    return stop ? .stop : .continue
                }
            }
            _ = bus.on(StringEvent.self).next { _ in calls.increment() }
            bus.dispatch(StringEvent("1"))
            #expect(calls.value == 0)
            bus.dispatch(StringEvent("2"))
            #expect(calls.value == 1)
        }
    }
}
