import Dispatch
import EventBus
import EventBusFoundation
import EventBusTesting
import Foundation
import Testing

@Suite("EventBusTesting under Swift Testing", .tags(.stress))
struct EventBusTestingTests {
    @Test("record keeps every event of its type in dispatch order, and stops when disposed")
    func recordKeepsOrder() {
        let bus = EventBus()
        let logins = bus.record(LoginEvent.self)
        for id in ["1", "2", "3"] { bus.dispatch(LoginEvent(userID: id)) }
        bus.dispatch(LogoutEvent(userID: "1"))
        #expect(logins.events.map(\.userID) == ["1", "2", "3"])
        #expect(logins.last == LoginEvent(userID: "3"))
        logins.dispose()
        bus.dispatch(LoginEvent(userID: "4"))
        #expect(logins.count == 3)
        #expect(bus.subscriptionCount == 0, "the recorder's subscription is internal")
    }

    @Test("record from 4 threads: every event once, each thread's in its order")
    func recordIsThreadSafe() async {
        let bus = EventBus()
        let logins = bus.record(LoginEvent.self)
        let finished = await onThreads(4) { thread in
            for i in 0..<500 { bus.dispatch(LoginEvent(userID: "\(thread)-\(i)")) }
        }
        #expect(finished)
        let events = logins.events.map(\.userID)
        #expect(events.count == 2000)
        for thread in 0..<4 {
            let own = events.filter { $0.hasPrefix("\(thread)-") }
            #expect(own == (0..<500).map { "\(thread)-\($0)" })
        }
        print("recorder: 4 threads × 500 events recorded, \(events.count) in all, each thread's in order")
    }

    @Test("an expectation made before the action returns the first match; it ignores the others")
    func expectationMatches() async throws {
        let bus = EventBus()
        let login = bus.expectation(LoginEvent.self) { $0.userID == "42" }
        bus.dispatch(LoginEvent(userID: "7"))
        bus.dispatch(LoginEvent(userID: "42"))
        bus.dispatch(LoginEvent(userID: "42b"))
        let event = try await login.value(timeout: .milliseconds(100))
        #expect(event.userID == "42")
        #expect(bus.subscriptions.isEmpty, "the expectation's subscription ended with the match")
    }

    @Test("expect waits for an event dispatched later on another queue")
    func expectWaits() async throws {
        let bus = EventBus()
        // Dispatched every 5 ms from 20 ms on until the expectation is over (at most 10 s): a single
        // dispatch after 20 ms came before the expectation's subscription once, in CI's
        // AddressSanitizer stage on a loaded machine.
        let over = Locked(false)
        DispatchQueue(label: "expectWaits").asyncAfter(deadline: .now() + .milliseconds(20)) {
            for _ in 0..<2_000 where !over.withLock({ $0 }) {
                bus.dispatch(LoginEvent(userID: "42"))
                _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(5))
            }
        }
        let event = try await bus.expect(LoginEvent.self, where: { $0.userID == "42" }, timeout: .seconds(5))
        over.withLock { $0 = true }
        #expect(event.userID == "42")
    }

    @Test("a timed-out expectation throws, listing the events that did not match")
    func expectationTimesOut() async {
        let bus = EventBus()
        let login = bus.expectation(LoginEvent.self) { $0.userID == "42" }
        bus.dispatch(LoginEvent(userID: "7"))
        do {
            _ = try await login.value(timeout: .milliseconds(50))
            Issue.record("no error thrown")
        } catch let error as EventBusTestingError {
            #expect(error.message.contains("no matching"))
            #expect(error.message.contains("userID: \"7\""))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("expectNone passes when nothing matches and lists what did")
    func expectNone() async throws {
        let bus = EventBus()
        bus.dispatch(LogoutEvent(userID: "before"))  // before the window: not counted
        try await bus.expectNone(LogoutEvent.self, during: .milliseconds(20))
        // Dispatched every 5 ms until the expectation is over (at most 10 s), so that one lands inside
        // its window however late the window opens on a loaded machine (a single dispatch after 5 ms
        // could come before the subscription, under the thread sanitizer).
        let over = Locked(false)
        DispatchQueue(label: "expectNone.producer").async {
            for _ in 0..<2_000 where !over.withLock({ $0 }) {
                bus.dispatch(LogoutEvent(userID: "42"))
                _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(5))
            }
        }
        await #expect(throws: EventBusTestingError.self) {
            try await bus.expectNone(LogoutEvent.self, during: .milliseconds(200))
        }
        over.withLock { $0 = true }
    }

    @Test("settle waits for the queued deliveries enqueued before it")
    func settleWaitsForQueues() async throws {
        let bus = EventBus()
        let queue = DispatchQueue(label: "slow")
        let done = Locked(0)
        let token = bus.on(LoginEvent.self).atQueue(queue).next { _ in
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(2))  // a slow handler
            done.withLock { $0 += 1 }
        }
        for i in 0..<20 { bus.dispatch(LoginEvent(userID: "\(i)")) }
        await bus.settle()
        #expect(done.withLock { $0 } == 20)
        try await bus.settle(timeout: .seconds(1))
        token.dispose()
        print("settle: 20 deliveries on a serial queue, 2 ms each, all run when settle returned")
    }

    /// An actor owner for ``settleWaitsForActors()``.
    actor Sessions {
        var users: [String] = []
        func start(on bus: EventBus) {
            bus.on(LoginEvent.self).isolated(to: self).next { sessions, event in sessions.users.append(event.userID) }
        }
    }

    @Test("settle waits for the actor-isolated deliveries enqueued before it")
    func settleWaitsForActors() async throws {
        let bus = EventBus()
        let sessions = Sessions()
        await sessions.start(on: bus)
        for i in 0..<1_000 { bus.dispatch(LoginEvent(userID: "\(i)")) }
        await bus.settle()
        #expect(await sessions.users == (0..<1_000).map { "\($0)" })
        try bus.requireNoHandlerErrors()
    }

    @Test("settle returns under a steady producer once what was enqueued before it has run")
    func settleIsASnapshot() async throws {
        let bus = EventBus()
        let queue = DispatchQueue(label: "busy")
        let handled = Locked<Set<String>>([])
        let token = bus.on(LoginEvent.self).atQueue(queue).next { event in
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .microseconds(200))  // a slow handler
            handled.withLock { _ = $0.insert(event.userID) }
        }
        // A producer that keeps the queue busy for as long as the test runs: the bus never has
        // nothing in flight.
        let stop = Locked(false)
        let produced = Locked(0)
        DispatchQueue(label: "settleIsASnapshot.producer").async {
            var n = 0
            while !stop.withLock({ $0 }) {
                bus.dispatch(LoginEvent(userID: "noise \(n)"))
                n += 1
                if n % 8 == 0 { _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .microseconds(500)) }
            }
            produced.withLock { $0 = n }
        }
        for i in 0..<50 { bus.dispatch(LoginEvent(userID: "before \(i)")) }
        var settled = true
        do {
            try await bus.settle(timeout: .seconds(10))
        } catch {
            settled = false
        }
        let seen = handled.withLock { $0 }
        stop.withLock { $0 = true }
        #expect(settled, "settle did not return while another thread kept dispatching")
        #expect((0..<50).allSatisfy { seen.contains("before \($0)") }, "a delivery enqueued before settle had not run")
        token.dispose()
        print(
            "settle: \(settled ? "returned" : "did not return") beside a producer (\(seen.count) deliveries run by then)"
        )
    }

    @Test("requireNoLiveSubscriptions lists each live subscription with its call site and owner")
    func noLiveSubscriptions() throws {
        let bus = EventBus()
        try bus.requireNoLiveSubscriptions()
        var screen: ProfileScreen? = ProfileScreen(bus: bus)
        #expect(throws: EventBusTestingError.self) { try bus.requireNoLiveSubscriptions() }
        do {
            try bus.requireNoLiveSubscriptions()
        } catch let error as EventBusTestingError {
            #expect(error.message.contains("1 live subscription:"))
            #expect(error.message.contains("Fixtures.swift"))
            #expect(error.message.contains("ProfileScreen (alive)"))
        }
        withExtendedLifetime(screen) {}
        screen = nil
        // Not reclaimed yet (no dispatch, no purge), listed with its owner gone: not live.
        #expect(bus.subscriptions.map(\.isOwnerAlive) == [false])
        try bus.requireNoLiveSubscriptions()
    }

    @Test("requireNoLiveSubscriptions sees a NotificationCenter bridge the app forgot, at the line that made it")
    func forgottenBridgeIsLive() throws {
        let bus = EventBus()
        let name = Notification.Name("EventBusTestingTests.cartDidChange")
        let outbound = bus.bridge(LoginEvent.self) { _ in Notification(name: name) }
        let inbound = bus.bridge(notification: name, to: LogoutEvent.self) { _ in LogoutEvent(userID: "1") }
        #expect(bus.subscriptionCount == 2, "a bridge is the app's subscription: counted")
        do {
            try bus.requireNoLiveSubscriptions()
            Issue.record("two bridges are live, but requireNoLiveSubscriptions passed")
        } catch let error as EventBusTestingError {
            #expect(error.message.contains("2 live subscriptions:"))
            #expect(error.message.contains("EventBusTestingTests/EventBusTestingTests.swift"), "\(error.message)")
        }
        outbound.dispose()
        inbound.dispose()
        try bus.requireNoLiveSubscriptions()
    }

    @Test("requireNoHandlerErrors throws once a throwing handler threw, naming the error and call site")
    func noHandlerErrors() throws {
        let bus = EventBus()
        bus.handlerErrorHandler = { _ in }
        let token = bus.on(LoginEvent.self).next { _ throws in throw Failed() }
        try bus.requireNoHandlerErrors()
        bus.dispatch(LoginEvent(userID: "42"))
        do {
            try bus.requireNoHandlerErrors()
            Issue.record("no error thrown")
        } catch let error as EventBusTestingError {
            #expect(error.message.hasPrefix("1 handler error"))
            #expect(error.message.contains("Failed"))
            #expect(error.message.contains("EventBusTestingTests.swift"))
        }
        token.dispose()
    }

    @Test("requireNoDroppedDeliveries throws once a bounded subscription dropped, naming how many and which")
    func noDroppedDeliveries() async throws {
        let bus = EventBus()
        let queue = DispatchQueue(label: "testing.bounded")
        queue.suspend()
        let token = bus.on(LoginEvent.self).atQueue(queue).buffering(.bufferingNewest(1)).next { _ in }
        bus.dispatch(LoginEvent(userID: "1"))
        try bus.requireNoDroppedDeliveries()
        bus.dispatch(LoginEvent(userID: "2"))
        bus.dispatch(LoginEvent(userID: "3"))
        do {
            try bus.requireNoDroppedDeliveries()
            Issue.record("no error thrown")
        } catch let error as EventBusTestingError {
            #expect(error.message.hasPrefix("2 deliveries dropped"))
            #expect(error.message.contains("newest 1, 1 pending, 2 dropped"), "\(error.message)")
        }
        queue.resume()
        await bus.settle()
        token.dispose()
    }
}

/// `settle`'s edges: cancellation, and the count its timeout error gives.
@Suite("settle: cancelled at once, and counting only what it waits for")
struct SettleEdgeTests {
    struct Tick: Event {}

    @Test("settle(timeout:) in a cancelled task throws CancellationError at once, not after the timeout")
    func cancelledSettle() async {
        let bus = EventBus()
        let queue = DispatchQueue(label: "settle.cancel")
        let token = bus.on(Tick.self).atQueue(queue).next { _ in }
        queue.suspend()
        bus.dispatch(Tick())
        let task = Task { () -> (error: String, seconds: Double) in
            withUnsafeCurrentTask { $0?.cancel() }
            let start = DispatchTime.now().uptimeNanoseconds
            do {
                try await bus.settle(timeout: .seconds(5))
                return ("none", 0)
            } catch {
                return ("\(type(of: error))", Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
        }
        let outcome = await task.value
        queue.resume()
        token.dispose()
        #expect(outcome.error == "CancellationError")
        #expect(outcome.seconds < 4, "it waited for the timeout")
    }

    @Test("settle(timeout:)'s error counts the deliveries enqueued before it, not those enqueued after")
    func countsOnlyThoseBefore() async {
        let bus = EventBus()
        let queue = DispatchQueue(label: "settle.count")
        let token = bus.on(Tick.self).atQueue(queue).next { _ in }
        queue.suspend()
        bus.dispatch(Tick())  // the one delivery enqueued before both settles
        let first = Task { try? await bus.settle(timeout: .seconds(3)) }  // takes the turn
        try? await Task.sleep(nanoseconds: 100_000_000)
        let second = Task { () -> String in
            do {
                try await bus.settle(timeout: .milliseconds(500))
                return "returned"
            } catch {
                return "\(error)"
            }
        }
        try? await Task.sleep(nanoseconds: 100_000_000)
        for _ in 0..<10 { bus.dispatch(Tick()) }  // enqueued after both settles began
        let message = await second.value
        queue.resume()
        _ = await first.value
        token.dispose()
        #expect(message.hasPrefix("1 enqueued"), "\(message)")
    }
}
