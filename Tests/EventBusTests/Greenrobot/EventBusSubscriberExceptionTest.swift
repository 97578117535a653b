import Testing

@testable import EventBus

// Port of greenrobot's EventBusSubscriberExceptionTest.
//
// Adapted: greenrobot posts a `SubscriberExceptionEvent` (causingEvent, causingSubscriber,
// throwable); ours calls `handlerErrorHandler` with a `HandlerError` (error, eventType,
// subscriptionID, fileID, line): the causing subscriber is the subscription id, the causing event
// is named by its type. testBadExceptionSubscriber: the error handler is a closure that cannot
// throw; adapted as an error handler that dispatches to a subscriber which throws in turn (the
// recursion greenrobot guards against is the caller's to stop here, and the test stops it).
extension Greenrobot {
    @Suite("EventBusSubscriberExceptionTest (greenrobot)", .offThePool)
    struct EventBusSubscriberExceptionTest {
        struct RuntimeException: Error, Equatable { var message: String }
        /// What the error handler dispatches (greenrobot's SubscriberExceptionEvent as an event).
        struct SubscriberExceptionEvent: Event { var message: String }

        @Test func testSubscriberExceptionEvent() {
            let bus = EventBus()
            let tracker = GreenrobotTracker()
            let reports = Shared<[HandlerError]>([])
            bus.handlerErrorHandler = { failure in
                reports.withLock { $0.append(failure) }
                tracker.track(failure)
            }
            let line = #line + 1
            let token = bus.on(StringEvent.self).next { _ throws in throw RuntimeException(message: "Bar") }
            bus.dispatch(StringEvent("Foo"))
            #expect(tracker.eventCount == 1)
            let exEvent = reports.value.first
            #expect(exEvent?.typeName == String(reflecting: StringEvent.self))
            #expect(exEvent?.subscriptionID == token.id)
            #expect((exEvent?.error as? RuntimeException)?.message == "Bar")
            #expect(exEvent?.fileID == #fileID)
            #expect(exEvent?.line == line)
        }

        @Test func testBadExceptionSubscriber() {
            let bus = EventBus()
            let tracker = GreenrobotTracker()
            let reports = Shared<[String]>([])
            bus.handlerErrorHandler = { [weak bus] failure in
                let message = (failure.error as? RuntimeException)?.message ?? "?"
                reports.append(message)
                // Greenrobot does not post a SubscriberExceptionEvent for a failing
                // SubscriberExceptionEvent subscriber; here the handler itself makes that choice.
                if message != "Bad" { bus?.dispatch(SubscriberExceptionEvent(message: message)) }
            }
            _ = bus.on(StringEvent.self).next { _ throws in throw RuntimeException(message: "Bar") }
            // BadExceptionSubscriber, and the test's own onEvent(SubscriberExceptionEvent).
            _ = bus.on(SubscriberExceptionEvent.self).next { _ throws in throw RuntimeException(message: "Bad") }
            _ = bus.on(SubscriberExceptionEvent.self).next { event in tracker.track(event.message) }
            bus.dispatch(StringEvent("Foo"))
            #expect(tracker.eventCount == 1)
            #expect(tracker.lastEvent == "Bar")
            #expect(reports.value == ["Bar", "Bad"])
        }

        // Beyond the Java test: the other subscribers still run, and the dispatcher never sees the error.
        @Test func testOtherSubscribersStillRun() {
            let bus = EventBus()
            let calls = Shared<[String]>([])
            let reports = Shared(0)
            bus.handlerErrorHandler = { _ in reports.increment() }
            _ = bus.on(StringEvent.self).priority(.high).next { _ throws in
                calls.append("high")
                throw RuntimeException(message: "high")
            }
            _ = bus.on(StringEvent.self).next { _ throws in
                calls.append("normal")
                throw RuntimeException(message: "normal")
            }
            _ = bus.on(StringEvent.self).monitor().next { _ in calls.append("monitor") }
            bus.dispatch(StringEvent("Foo"))
            #expect(calls.value == ["high", "normal", "monitor"])
            #expect(reports.value == 2)
        }
    }
}
