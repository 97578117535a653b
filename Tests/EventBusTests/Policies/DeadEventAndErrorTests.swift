import Dispatch
import EventBus
import Testing

/// DESIGN §7: dead events and throwing handlers.
@Suite("Policies: dead events and handler errors", .tags(.stress), .offThePool)
struct DeadEventAndErrorTests {
    struct Keyed: Event {
        let key: String
        var eventType: String { key }
    }
    struct Failure: Error, Equatable { let code: Int }

    @Test("A dispatch that reaches nobody is reported once, with its event and key, on the dispatching thread")
    func deadEvents() {
        let bus = EventBus()
        let dead = Shared<[String]>([])
        bus.deadEventHandler = { dead.append("\(type(of: $0.event)) \($0.key ?? "nil")") }
        bus.dispatch(Ping())
        _ = bus.on(Keyed.self).ofType("a").next { _ in }
        bus.dispatch(Keyed(key: "a"))
        bus.dispatch(Keyed(key: "b"))
        #expect(dead.value == ["Ping nil", "Keyed b"])
    }

    @Test("Ended subscriptions and dead owners do not count; stopped and queued dispatches are not dead")
    func whatCounts() {
        let bus = EventBus()
        let dead = Shared(0)
        bus.deadEventHandler = { _ in dead.increment() }
        let token = bus.on(Ping.self).next { _ in }
        token.dispose()
        bus.dispatch(Ping())
        #expect(dead.value == 1)
        var owner: Sentinel? = Sentinel()
        bus.on(Ping.self).freeWith(owner).next { _, _ in }
        owner = nil
        bus.dispatch(Ping())
        #expect(dead.value == 2)
        let stopper = bus.on(Ping.self).handle { _ in .stop }
        bus.dispatch(Ping())
        #expect(dead.value == 2)
        stopper.dispose()
        let queue = DispatchQueue(label: "dead.queued")
        _ = bus.on(Ping.self).atQueue(queue).next { _ in }
        bus.dispatch(Ping())
        #expect(dead.value == 2)
        #expect(drain(queue))
        bus.deadEventHandler = nil
        bus.dispatch(Pong())
        #expect(dead.value == 2)
    }

    @Test("The dead-event handler may dispatch: an ordinary dispatch, no recursion into itself for a live type")
    func deadHandlerDispatches() {
        let bus = EventBus()
        let pongs = Shared(0)
        _ = bus.on(Pong.self).next { _ in pongs.increment() }
        bus.deadEventHandler = { [unowned bus] _ in bus.dispatch(Pong()) }
        bus.dispatch(Ping())
        #expect(pongs.value == 1)
    }

    @Test("A throwing handler: the error goes to the handler with its type, id and call site; the others still run")
    func throwingHandler() {
        let bus = EventBus()
        let errors = Shared<[HandlerError]>([])
        let log = Shared<[String]>([])
        bus.handlerErrorHandler = { error in errors.withLock { $0.append(error) } }
        let line = #line + 1
        let token = bus.on(Ping.self).next { event throws in
            log.append("thrower")
            throw Failure(code: event.value)
        }
        _ = bus.on(Ping.self).next { _ in log.append("after") }
        bus.dispatch(Ping(value: 7))
        #expect(log.value == ["thrower", "after"])
        let error = errors.value.first
        #expect(errors.value.count == 1)
        #expect(error?.error as? Failure == Failure(code: 7))
        #expect(error?.typeName.hasSuffix("Ping") == true)
        #expect(error?.subscriptionID == token.id)
        #expect(error?.fileID.hasSuffix("DeadEventAndErrorTests.swift") == true)
        #expect(error?.line == line)
        #expect(error?.description.contains("threw") == true)
    }

    @Test("Throwing owner-passing, queued and main-actor handlers report on their own thread")
    func throwingVariants() {
        let bus = EventBus()
        let errors = Shared<[Int]>([])
        bus.handlerErrorHandler = { error in
            if let failure = error.error as? Failure { errors.withLock { $0.append(failure.code) } }
        }
        let owner = Sentinel()
        bus.on(Ping.self).freeWith(owner).next { _, _ throws in throw Failure(code: 1) }
        let queue = DispatchQueue(label: "errors.queued")
        _ = bus.on(Ping.self).atQueue(queue).next { _ throws in throw Failure(code: 2) }
        _ = bus.on(Ping.self).onMainActor().next { _ throws in throw Failure(code: 3) }
        bus.dispatch(Ping())
        #expect(drain(queue))
        #expect(MainQueue.drain())
        #expect(errors.value.sorted() == [1, 2, 3])
        withExtendedLifetime(owner) {}
    }

    @Test(
        "Without an error handler, a throwing handler does not disturb the dispatch; debug builds report its first error"
    )
    func noHandler() {
        let bus = EventBus()
        let after = Shared(0)
        _ = bus.on(Ping.self).next { _ throws in throw Failure(code: 0) }
        _ = bus.on(Ping.self).next { _ in after.increment() }
        // The report the test provokes goes to its log, not to the test run's output.
        let log = Shared<[String]>([])
        let toLog: @Sendable (String) -> Void = { line in log.append(line) }
        Diagnostics.$sink.withValue(Diagnostics.Sink(toLog)) {
            bus.dispatch(Ping())
            bus.dispatch(Ping())
        }
        #expect(after.value == 2)
        #if DEBUG
            #expect(log.value.count == 1, "the first error of each subscription only: \(log.value)")
            #expect(log.value.first?.contains("DeadEventAndErrorTests.swift") == true)
            #expect(log.value.first?.contains("threw Failure(code: 0)") == true)
        #else
            #expect(log.value.isEmpty)
        #endif
    }
}
