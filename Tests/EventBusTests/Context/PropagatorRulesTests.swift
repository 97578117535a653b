import Dispatch
import Testing

@testable import EventBus

/// What the bus holds a context propagator to, whatever the propagator does: each delivery's
/// handler runs at most once however often a propagator calls its body (the extra calls reported),
/// and exactly once if it never calls it; a stream's loop body runs with its event's dispatcher's
/// context, "none" included, never with the consuming task's own; a non-optional task-local is
/// carried with its default.
@Suite("Context propagator rules", .offThePool)
struct PropagatorRulesTests {
    struct Ping: Event {
        var label = ""
    }

    enum RequestID {
        @TaskLocal static var current: String?
    }

    enum Tenant {
        @TaskLocal static var id = "public"
    }

    /// Calls every body it is given twice, with the bus's diagnostics routed to `log` meanwhile
    /// (the second call is where the bus reports the misuse), and counts the restores it finished.
    final class CallsTwice: EventContextPropagator, @unchecked Sendable {
        // @unchecked Sendable: `log` and `restores` are `Shared`, which take their lock on every access.
        let log = Shared<[String]>([])
        let restores = Shared(0)

        func capture() -> (any Sendable)? { RequestID.current }

        func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {
            routingDiagnostics {
                RequestID.$current.withValue(context as? String) {
                    body()
                    body()
                }
            }
            restores.increment()
        }

        func restore(
            _ context: any Sendable, for delivery: EventContextDelivery, isolation: isolated (any Actor)?,
            _ body: () async -> Void
        ) async {
            await routingDiagnostics {
                await RequestID.$current.withValue(context as? String) {
                    await body()
                    await body()
                }
            }
            restores.increment()
        }

        func withoutContext(
            for delivery: EventContextDelivery, isolation: isolated (any Actor)?, _ body: () async -> Void
        ) async {
            await routingDiagnostics {
                await RequestID.$current.withValue(nil) {
                    await body()
                    await body()
                }
            }
            restores.increment()
        }

        /// Runs `body` with the bus's diagnostics routed to `log`, in debug builds (the only ones
        /// that write them; binding the sink crashes an optimized build of the tests).
        private func routingDiagnostics(_ body: () -> Void) {
            #if DEBUG
                Diagnostics.$sink.withValue(Diagnostics.Sink { [log] line in log.append(line) }, operation: body)
            #else
                body()
            #endif
        }

        /// ``routingDiagnostics(_:)`` around an asynchronous body.
        private func routingDiagnostics(isolation: isolated (any Actor)? = #isolation, _ body: () async -> Void) async {
            #if DEBUG
                await Diagnostics.$sink.withValue(Diagnostics.Sink { [log] line in log.append(line) }, operation: body)
            #else
                await body()
            #endif
        }
    }

    /// Calls no body: the bus must call it afterwards.
    struct CallsNone: EventContextPropagator {
        func capture() -> (any Sendable)? { RequestID.current }
        func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {}
        func restore(
            _ context: any Sendable, for delivery: EventContextDelivery, isolation: isolated (any Actor)?,
            _ body: () async -> Void
        ) async {}
    }

    /// A propagator that keeps the protocol's default `withoutContext` (it runs the body as it is).
    struct DefaultWithoutContext: EventContextPropagator {
        func capture() -> (any Sendable)? { RequestID.current }
        func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {
            RequestID.$current.withValue(context as? String, operation: body)
        }
        func restore(
            _ context: any Sendable, for delivery: EventContextDelivery, isolation: isolated (any Actor)?,
            _ body: () async -> Void
        ) async {
            await RequestID.$current.withValue(context as? String, operation: body)
        }
    }

    /// The owner of the actor-isolated subscription.
    actor Owner {}

    /// Checks what `propagator` logged for `count` restores that each called the body twice.
    func expectReported(_ propagator: CallsTwice, _ count: Int, hop: String) {
        #if DEBUG
            #expect(propagator.log.value.count == count, "\(propagator.log.value)")
            for line in propagator.log.value {
                #expect(line.contains("CallsTwice called its body twice for Ping via \(hop)"), "\(line)")
            }
        #else
            #expect(propagator.log.value.isEmpty)
        #endif
    }

    @Test("a propagator that calls its body twice does not run a queued handler twice, and is reported")
    func twiceQueued() {
        let bus = EventBus()
        let propagator = CallsTwice()
        bus.contextPropagator = propagator
        let queue = DispatchQueue(label: "rules.queued")
        let seen = Shared<[String]>([])
        let token = bus.on(Ping.self).atQueue(queue).next { _ in seen.append(RequestID.current ?? "none") }
        RequestID.$current.withValue("req-1") { bus.dispatch(Ping()) }
        RequestID.$current.withValue("req-2") { bus.dispatch(Ping()) }
        #expect(drain(queue))
        #expect(seen.value == ["req-1", "req-2"])
        #expect(propagator.restores.value == 2)
        expectReported(propagator, 2, hop: "queue \"rules.queued\"")
        token.dispose()
    }

    @Test(
        "a propagator that calls its body twice does not run an immediate handler twice, even after a deferred dispatch"
    )
    func twiceImmediate() {
        let bus = EventBus()
        let propagator = CallsTwice()
        bus.contextPropagator = propagator
        let seen = Shared<[String]>([])
        let token = bus.on(Ping.self).next { event in seen.append(event.label + " " + (RequestID.current ?? "none")) }
        // On the dispatching thread: no capture, no restore.
        RequestID.$current.withValue("req-1") { bus.dispatch(Ping(label: "direct")) }
        // On the bus queue: the propagator restores around the whole dispatch, and calls it twice.
        RequestID.$current.withValue("req-2") { bus.dispatchOnBusQueue(Ping(label: "deferred")) }
        #expect(waitUntil { propagator.restores.value == 1 })
        #expect(seen.value == ["direct req-1", "deferred req-2"])
        expectReported(propagator, 1, hop: "deferred dispatch")
        token.dispose()
    }

    @Test("a propagator that calls its body twice does not run an actor-isolated handler twice")
    func twiceActor() async {
        let bus = EventBus()
        let propagator = CallsTwice()
        bus.contextPropagator = propagator
        let owner = Owner()
        let seen = Shared<[String]>([])
        bus.on(Ping.self).isolated(to: owner).next { _, _ in seen.append(RequestID.current ?? "none") }
        RequestID.$current.withValue("req-1") { bus.dispatch(Ping()) }
        RequestID.$current.withValue("req-2") { bus.dispatch(Ping()) }
        // Each restore counts once both its calls returned: the handler ran by then, if it ran twice.
        #expect(await waitUntil(timeout: actorTimeout) { propagator.restores.value == 2 })
        #expect(seen.value == ["req-1", "req-2"])
        expectReported(propagator, 2, hop: "actor \(String(reflecting: Owner.self))")
    }

    @Test("a propagator that calls its body twice does not run a stream's loop body twice, with a context or without")
    func twiceStream() async {
        let bus = EventBus()
        let propagator = CallsTwice()
        bus.contextPropagator = propagator
        let seen = Shared<[String]>([])
        let consumer = Task { [events = bus.events(of: Ping.self)] in
            await events.consume { _ in
                seen.append(RequestID.current ?? "none")
                if seen.value.count == 2 { withUnsafeCurrentTask { $0?.cancel() } }
            }
        }
        RequestID.$current.withValue("req-1") { bus.dispatch(Ping()) }
        bus.dispatch(Ping())  // no context: the propagator's withoutContext runs the body
        _ = await consumer.value
        #expect(seen.value == ["req-1", "none"])
        #expect(propagator.restores.value == 2)
        expectReported(propagator, 2, hop: "stream")
    }

    @Test("a propagator that never calls its stream body has it called afterwards, once, and is reported")
    func noneStream() async {
        let bus = EventBus()
        bus.contextPropagator = CallsNone()
        let seen = Shared(0)
        let log = Shared<[String]>([])
        let consumer = Task { [events = bus.events(of: Ping.self)] in
            #if DEBUG
                await Diagnostics.$sink.withValue(Diagnostics.Sink { line in log.append(line) }) {
                    await events.consume { _ in
                        seen.increment()
                        if seen.value == 1 { withUnsafeCurrentTask { $0?.cancel() } }
                    }
                }
            #else
                // Binding the sink crashes an optimized build of the tests; nothing is written there.
                await events.consume { _ in
                    seen.increment()
                    if seen.value == 1 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            #endif
        }
        RequestID.$current.withValue("req-1") { bus.dispatch(Ping()) }
        _ = await consumer.value
        #expect(seen.value == 1)
        #if DEBUG
            #expect(log.value.count == 1, "\(log.value)")
            #expect(log.value.first?.contains("CallsNone did not call its body for Ping via stream") == true)
        #else
            #expect(log.value.isEmpty)
        #endif
    }

    @Test("consume runs an event dispatched with no context with none, not with the consuming task's own")
    func streamWithoutContext() async {
        let bus = EventBus()
        bus.contextPropagator = TaskLocalContextPropagator(RequestID.$current)
        let seen = Shared<[String]>([])
        let consumer = Task { [events = bus.events(of: Ping.self)] in
            await RequestID.$current.withValue("consumer") {
                await events.consume { _ in
                    seen.append(RequestID.current ?? "none")
                    if seen.value.count == 3 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }
        }
        RequestID.$current.withValue("a") { bus.dispatch(Ping()) }
        bus.dispatch(Ping())
        RequestID.$current.withValue("c") { bus.dispatch(Ping()) }
        _ = await consumer.value
        #expect(seen.value == ["a", "none", "c"])
    }

    @Test("with no propagator, or one that keeps the default withoutContext, consume keeps the consumer's own context")
    func streamConsumerContext() async {
        for propagator in [nil, DefaultWithoutContext()] as [(any EventContextPropagator)?] {
            let bus = EventBus()
            bus.contextPropagator = propagator
            let seen = Shared<[String]>([])
            let consumer = Task { [events = bus.events(of: Ping.self)] in
                await RequestID.$current.withValue("consumer") {
                    await events.consume { _ in
                        seen.append(RequestID.current ?? "none")
                        if seen.value.count == 2 { withUnsafeCurrentTask { $0?.cancel() } }
                    }
                }
            }
            RequestID.$current.withValue("a") { bus.dispatch(Ping()) }
            bus.dispatch(Ping())
            _ = await consumer.value
            #expect(seen.value == [propagator == nil ? "consumer" : "a", "consumer"])
        }
    }

    @Test("TaskLocalContextPropagator takes an optional task-local as one: nil carries nothing")
    func optionalTaskLocal() {
        let propagator = TaskLocalContextPropagator(RequestID.$current)
        #expect(type(of: propagator) == TaskLocalContextPropagator<String>.self)
        #expect(propagator.capture() == nil)
        #expect(RequestID.$current.withValue("req-1") { propagator.capture() as? String } == "req-1")
    }

    @Test("TaskLocalContextPropagator carries a non-optional task-local, its default included, and as a header")
    func nonOptionalTaskLocal() {
        let bus = EventBus()
        let propagator = TaskLocalContextPropagator(Tenant.$id, header: "tenant")
        bus.contextPropagator = propagator
        #expect(propagator.capture() as? String == "public", "the default is a value to carry")
        let queue = DispatchQueue(label: "rules.tenant")
        let seen = Shared<[String]>([])
        let token = bus.on(Ping.self).atQueue(queue).next { _ in seen.append(Tenant.id) }
        Tenant.$id.withValue("acme") { bus.dispatch(Ping()) }
        bus.dispatch(Ping())
        #expect(drain(queue))
        #expect(seen.value == ["acme", "public"])
        #expect(propagator.headers(of: "acme") == ["tenant": "acme"])
        #expect(propagator.context(fromHeaders: ["tenant": "acme"]) as? String == "acme")
        #expect(TaskLocalContextPropagator(Tenant.$id).headers(of: "acme").isEmpty)
        token.dispose()
    }

    @Test("a stream's event dispatched before a non-optional task-local's propagator was set runs with its default")
    func nonOptionalStream() async {
        let bus = EventBus()
        let seen = Shared<[String]>([])
        let events = bus.events(of: Ping.self)
        Tenant.$id.withValue("early") { bus.dispatch(Ping()) }  // no propagator yet: nothing captured
        bus.contextPropagator = TaskLocalContextPropagator(Tenant.$id)
        Tenant.$id.withValue("acme") { bus.dispatch(Ping()) }
        bus.dispatch(Ping())  // the default is captured and carried
        // Consumed once the propagator is set: the first event finds it, with no context to restore.
        let consumer = Task { [events] in
            await Tenant.$id.withValue("consumer") {
                await events.consume { _ in
                    seen.append(Tenant.id)
                    if seen.value.count == 3 { withUnsafeCurrentTask { $0?.cancel() } }
                }
            }
        }
        _ = await consumer.value
        #expect(seen.value == ["public", "acme", "public"])
    }
}
