import Testing

@testable import EventBus

// Port of greenrobot's EventBusNoSubscriberEventTest.
//
// Adapted: greenrobot posts a `NoSubscriberEvent` on the bus; ours calls `deadEventHandler` with a
// `DeadEvent` (a closure, so it cannot recurse into itself). `noSub.eventBus` has no counterpart
// (the handler is set on one bus), so `assertSame(eventBus, noSub.eventBus)` is dropped.
// testBadNoSubscriberSubscriber: the dead-event handler cannot throw; it is adapted as a
// dead-event handler that dispatches to a throwing subscriber, whose error reaches
// `handlerErrorHandler` (greenrobot's SubscriberExceptionEvent).
extension Greenrobot {
    @Suite("EventBusNoSubscriberEventTest (greenrobot)", .offThePool)
    struct EventBusNoSubscriberEventTest {
        /// Greenrobot's `onEvent(NoSubscriberEvent)`: tracks the dead events of `bus`.
        static func trackDeadEvents(on bus: EventBus, _ tracker: GreenrobotTracker, _ dead: Shared<[DeadEvent]>) {
            bus.deadEventHandler = { event in
                dead.withLock { $0.append(event) }
                tracker.track(event.event)
            }
        }

        @Test func testNoSubscriberEvent() {
            let bus = EventBus()
            runNoSubscriberEvent(on: bus)
        }

        func runNoSubscriberEvent(on bus: EventBus) {
            let tracker = GreenrobotTracker()
            let dead = Shared<[DeadEvent]>([])
            Self.trackDeadEvents(on: bus, tracker, dead)
            bus.dispatch(StringEvent("Foo"))
            #expect(tracker.eventCount == 1)
            #expect(dead.value.count == 1)
            let noSub = dead.value.first
            #expect((noSub?.event as? StringEvent) == StringEvent("Foo"))
            #expect(noSub?.key == nil)
        }

        @Test func testNoSubscriberEventAfterUnregister() {
            let bus = EventBus()
            // DummySubscriber: subscribes to the String events, then unregisters.
            let token = bus.on(StringEvent.self).next { _ in }
            token.dispose()
            runNoSubscriberEvent(on: bus)
        }

        /// A throwing subscriber the dead-event handler dispatches to.
        struct NoSubscriberNotice: Event { var original: String }
        struct Bad: Error, Equatable { var message: String }

        @Test func testBadNoSubscriberSubscriber() {
            let bus = EventBus()
            let tracker = GreenrobotTracker()
            let errors = Shared<[HandlerError]>([])
            bus.handlerErrorHandler = { failure in
                errors.withLock { $0.append(failure) }
                tracker.track("SubscriberExceptionEvent")
            }
            bus.deadEventHandler = { [weak bus] dead in
                tracker.track(dead.event)
                bus?.dispatch(NoSubscriberNotice(original: (dead.event as? StringEvent)?.text ?? "?"))
            }
            // BadNoSubscriberSubscriber.
            _ = bus.on(NoSubscriberNotice.self).next { notice throws in
                throw Bad(message: "I'm bad: \(notice.original)")
            }
            bus.dispatch(StringEvent("Foo"))
            #expect(tracker.eventCount == 2)
            #expect(tracker.lastEvent == "SubscriberExceptionEvent")
            #expect(errors.value.count == 1)
            #expect((errors.value.first?.error as? Bad) == Bad(message: "I'm bad: Foo"))
            #expect(errors.value.first?.typeName.hasSuffix("NoSubscriberNotice") == true)
        }

        // Beyond the Java test: a key with no subscriber is dead even if other keys have some.
        @Test func testNoSubscriberForKey() {
            struct Keyed: Event {
                var key: String
                var eventType: String? { key }
            }
            let bus = EventBus()
            let dead = Shared<[String?]>([])
            bus.deadEventHandler = { event in dead.withLock { $0.append(event.key) } }
            _ = bus.on(Keyed.self).ofType("a").next { _ in }
            bus.dispatch(Keyed(key: "a"))
            bus.dispatch(Keyed(key: "b"))
            #expect(dead.value == ["b"])
        }
    }
}
