import Dispatch
import Testing

@_spi(Integrations) @testable import EventBus

/// The context hook (DESIGN §14): a propagator's value, captured where an event is dispatched, is
/// current again around every handler call that runs elsewhere; a synchronous handler sees the
/// dispatcher's own; with no propagator nothing is captured.
@Suite("Context propagation", .offThePool)
struct ContextPropagationTests {
    struct Ping: Event {
        var key: String?
        var eventType: String? { key }
    }

    /// The context: a task-local, as swift-distributed-tracing's `ServiceContext.current` is.
    enum RequestID {
        @TaskLocal static var current: String?
    }

    /// Records what the bus asked of it.
    final class Recorder: EventContextPropagator, @unchecked Sendable {
        // @unchecked Sendable: `log` is a `Shared`, which takes its lock on every access.
        let captures = Shared(0)
        let deliveries = Shared<[String]>([])
        /// Whether `restore` calls its body (a propagator that forgets it must not lose the call).
        let callsBody: Bool

        init(callsBody: Bool = true) { self.callsBody = callsBody }

        func capture() -> (any Sendable)? {
            captures.increment()
            return RequestID.current
        }

        func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {
            deliveries.append(delivery.description)
            guard callsBody else { return }
            RequestID.$current.withValue(context as? String, operation: body)
        }

        func restore(
            _ context: any Sendable, for delivery: EventContextDelivery, isolation: isolated (any Actor)?,
            _ body: () async -> Void
        ) async {
            deliveries.append(delivery.description)
            await RequestID.$current.withValue(context as? String, operation: body)
        }
    }

    @Test("a synchronous handler sees the dispatcher's context, and nothing is captured for it")
    func synchronous() {
        let bus = EventBus()
        let recorder = Recorder()
        bus.contextPropagator = recorder
        let seen = Shared<[String]>([])
        let token = bus.on(Ping.self).next { _ in seen.append(RequestID.current ?? "none") }
        let owner = Sentinel()
        bus.on(Ping.self).freeWith(owner).next { _, _ in seen.append(RequestID.current ?? "none") }
        RequestID.$current.withValue("req-1") { bus.dispatch(Ping()) }
        #expect(seen.value == ["req-1", "req-1"])
        #expect(recorder.captures.value == 0)
        #expect(recorder.deliveries.value.isEmpty)
        token.dispose()
    }

    @Test("a queued handler runs with the context captured at dispatch, and is told its hop")
    func queued() {
        let bus = EventBus()
        let recorder = Recorder()
        bus.contextPropagator = recorder
        let queue = DispatchQueue(label: "context.work")
        let seen = Shared<[String]>([])
        let token = bus.on(Ping.self).atQueue(queue).next { _ in seen.append(RequestID.current ?? "none") }
        RequestID.$current.withValue("req-2") { bus.dispatch(Ping(key: "k")) }
        bus.dispatch(Ping())  // no context then: the handler sees none
        #expect(drain(queue))
        #expect(seen.value == ["req-2", "none"])
        #expect(recorder.captures.value == 2)
        // A capture that returned nil restores nothing.
        #expect(recorder.deliveries.value == ["Ping [\"k\"] via queue \"context.work\""])
        token.dispose()
    }

    @Test("a main-actor handler enqueued from a background thread runs with the dispatcher's context")
    func mainActor() async {
        let bus = EventBus()
        let recorder = Recorder()
        bus.contextPropagator = recorder
        let seen = Shared<[String]>([])
        let token = bus.on(Ping.self).onMainActor().next { _ in seen.append(RequestID.current ?? "none") }
        #expect(onAnotherThread { RequestID.$current.withValue("req-3") { bus.dispatch(Ping()) } })
        #expect(await waitUntil { seen.value.count == 1 })
        #expect(seen.value == ["req-3"])
        #expect(recorder.deliveries.value == ["Ping via main actor"])
        token.dispose()
    }

    /// The owner of ``actorIsolated()``'s subscription.
    actor ContextActor {}

    @Test("an actor-isolated handler runs with each event's own dispatcher's context, never another's")
    func actorIsolated() async {
        let bus = EventBus()
        let recorder = Recorder()
        bus.contextPropagator = recorder
        let owner = ContextActor()
        let seen = Shared<[String]>([])
        bus.on(Ping.self).isolated(to: owner).next { _, _ in seen.append(RequestID.current ?? "none") }
        // One drain may run all three: the second must not see the first's context.
        RequestID.$current.withValue("req-a") { bus.dispatch(Ping()) }
        bus.dispatch(Ping())
        RequestID.$current.withValue("req-b") { bus.dispatch(Ping()) }
        #expect(await waitUntil(timeout: actorTimeout) { seen.value.count == 3 })
        #expect(seen.value == ["req-a", "none", "req-b"])
        let hop = "Ping via actor \(String(reflecting: ContextActor.self))"
        #expect(recorder.deliveries.value == [hop, hop])

        // With no propagator, nothing is carried to the actor, not even by the drain's task.
        let plain = EventBus()
        let seenPlain = Shared<[String]>([])
        plain.on(Ping.self).isolated(to: owner).next { _, _ in seenPlain.append(RequestID.current ?? "none") }
        RequestID.$current.withValue("req-c") { plain.dispatch(Ping()) }
        #expect(await waitUntil(timeout: actorTimeout) { seenPlain.value.count == 1 })
        #expect(seenPlain.value == ["none"])
    }

    @Test("a stream consumed with consume runs its body with each event's dispatcher's context")
    func stream() async {
        let bus = EventBus()
        let recorder = Recorder()
        bus.contextPropagator = recorder
        let seen = Shared<[String]>([])
        let consumer = Task { [events = bus.events(of: Ping.self)] in
            await events.consume { _ in
                seen.append(RequestID.current ?? "none")
                if seen.value.count == 3 { withUnsafeCurrentTask { $0?.cancel() } }
            }
        }
        #expect(await waitUntil { bus.subscriptionCount == 1 })
        RequestID.$current.withValue("a") { bus.dispatch(Ping()) }
        bus.dispatch(Ping())
        RequestID.$current.withValue("c") { bus.dispatch(Ping()) }
        #expect(await waitUntil { seen.value.count == 3 })
        #expect(seen.value == ["a", "none", "c"])
        #expect(recorder.deliveries.value.allSatisfy { $0 == "Ping via stream" })
        consumer.cancel()
        _ = await consumer.value
        #expect(await waitUntil { bus.subscriptionCount == 0 })
    }

    @Test(
        "a main-actor chain's post from a background thread hops to the main queue with its context, through two nodes")
    func mainActorChainHops() async {
        let list = MainActorEventNode(name: "List")
        let cell = MainActorEventNode(name: "Cell")
        #expect(await MainActor.run { cell.mount(on: list) })
        let recorder = Recorder()
        cell.contextPropagator = recorder
        let seen = Shared<[String]>([])
        let tokens = await MainActor.run {
            [
                cell.on(Ping.self).next { _ in seen.append("cell " + (RequestID.current ?? "none")) },
                list.on(Ping.self).next { _ in seen.append("list " + (RequestID.current ?? "none")) },
            ]
        }
        #expect(onAnotherThread { RequestID.$current.withValue("req-4") { cell.post(Ping()) } })
        #expect(await waitUntil { seen.value.count == 2 })
        #expect(seen.value == ["cell req-4", "list req-4"])
        #expect(recorder.deliveries.value == ["Ping via chain post at \"Cell\""])
        for token in tokens { token.dispose() }
    }

    @Test("a chain node's queued subscriber runs with the poster's context")
    func chainNodeQueued() {
        let root = EventNode(name: "Root")
        let leaf = EventNode(name: "Leaf")
        #expect(leaf.mount(on: root))
        root.contextPropagator = Recorder()
        let queue = DispatchQueue(label: "context.chain")
        let seen = Shared<[String]>([])
        let token = root.on(Ping.self).atQueue(queue).next { _ in seen.append(RequestID.current ?? "none") }
        RequestID.$current.withValue("req-5") { _ = leaf.post(Ping()) }
        #expect(drain(queue))
        #expect(seen.value == ["req-5"])
        token.dispose()
    }

    @Test("dispatchOnBusQueue and dispatchOnMain dispatch with the caller's context")
    func deferredDispatch() async {
        let bus = EventBus()
        let recorder = Recorder()
        bus.contextPropagator = recorder
        let seen = Shared<[String]>([])
        let token = bus.on(Ping.self).next { event in
            seen.append((event.key ?? "") + " " + (RequestID.current ?? "none"))
        }
        RequestID.$current.withValue("req-6") { bus.dispatchOnBusQueue(Ping(key: "bus")) }
        #expect(onAnotherThread { RequestID.$current.withValue("req-7") { bus.dispatchOnMain(Ping(key: "main")) } })
        #expect(await waitUntil { seen.value.count == 2 })
        #expect(Set(seen.value) == ["bus req-6", "main req-7"])
        #expect(recorder.deliveries.value.allSatisfy { $0.hasSuffix("via deferred dispatch") })
        token.dispose()
    }

    @Test(
        "a bridge's received event: dispatched on the bus queue with the context it came with, one restore as the remote hop"
    )
    func receivedDispatch() async {
        let bus = EventBus()
        let recorder = Recorder()
        bus.contextPropagator = recorder
        let seen = Shared<[String]>([])
        let queue = DispatchQueue(label: "context.received")
        let tokens = [
            bus.on(Ping.self).next { _ in seen.append("sync " + (RequestID.current ?? "none")) },
            bus.on(Ping.self).atQueue(queue).next { _ in seen.append("queue " + (RequestID.current ?? "none")) },
        ]
        // Made on a thread with a context of its own: the bridge's, which must not leak in.
        RequestID.$current.withValue("bridge") {
            bus.dispatchOnBusQueue(Ping(), restoring: "req-8", hop: .remote(wireName: "app.ping.v1"))
        }
        #expect(await waitUntil { seen.value.count == 2 })
        #expect(Set(seen.value) == ["sync req-8", "queue req-8"])
        #expect(recorder.deliveries.value.first == "Ping via remote \"app.ping.v1\"", "the dispatch: one remote hop")
        #expect(recorder.deliveries.value.count == 2, "then the queued subscriber's own hop; nothing else")
        #expect(recorder.captures.value == 1, "captured once: by the queued delivery, never for the hand-over")

        // No propagator set: a plain deferred dispatch.
        bus.contextPropagator = nil
        bus.dispatchOnBusQueue(Ping(), restoring: "req-9", hop: .remote(wireName: "app.ping.v1"))
        #expect(await waitUntil { seen.value.count == 4 })
        #expect(seen.value.suffix(2).allSatisfy { $0.hasSuffix(" none") })
        for token in tokens { token.dispose() }
    }

    @Test("with the propagator removed nothing is captured; a delivery enqueued before keeps its own")
    func removedPropagator() {
        let bus = EventBus()
        let recorder = Recorder()
        bus.contextPropagator = recorder
        let queue = DispatchQueue(label: "context.removed")
        let seen = Shared<[String]>([])
        let token = bus.on(Ping.self).atQueue(queue).next { _ in seen.append(RequestID.current ?? "none") }
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        RequestID.$current.withValue("before") { bus.dispatch(Ping()) }
        bus.contextPropagator = nil
        #expect(bus.contextPropagator == nil)
        #expect(bus.core.captureContext() == nil)
        RequestID.$current.withValue("after") { bus.dispatch(Ping()) }
        gate.signal()
        #expect(drain(queue))
        #expect(seen.value == ["before", "none"])
        #expect(recorder.captures.value == 1)
        token.dispose()
    }

    @Test("TaskLocalContextPropagator carries a task-local to a queued handler, and as a header's text")
    func taskLocalPropagator() {
        let bus = EventBus()
        let propagator = TaskLocalContextPropagator(RequestID.$current, header: "request-id")
        bus.contextPropagator = propagator
        let queue = DispatchQueue(label: "context.task-local")
        let seen = Shared<[String]>([])
        let token = bus.on(Ping.self).atQueue(queue).next { _ in seen.append(RequestID.current ?? "none") }
        RequestID.$current.withValue("req-8") { bus.dispatch(Ping()) }
        #expect(drain(queue))
        #expect(seen.value == ["req-8"])
        #expect(propagator.headers(of: "req-8") == ["request-id": "req-8"])
        #expect(propagator.context(fromHeaders: ["request-id": "req-9"]) as? String == "req-9")
        #expect(propagator.context(fromHeaders: ["other": "req-9"]) == nil)
        #expect(TaskLocalContextPropagator(RequestID.$current).headers(of: "req-8").isEmpty, "no header: stays here")
        token.dispose()
    }

    @Test("a propagator whose restore forgets its body does not lose the delivery")
    func forgottenBody() {
        let bus = EventBus()
        bus.contextPropagator = Recorder(callsBody: false)
        let queue = DispatchQueue(label: "context.forgotten")
        let calls = Shared(0)
        let token = bus.on(Ping.self).atQueue(queue).next { _ in calls.increment() }
        RequestID.$current.withValue("x") { bus.dispatch(Ping()) }
        #expect(drain(queue))
        #expect(calls.value == 1)
        token.dispose()
    }

    @Test("the dispose guarantee holds with a propagator: a disposed subscription's queued delivery does not run")
    func disposeGuarantee() {
        let bus = EventBus()
        bus.contextPropagator = Recorder()
        let queue = DispatchQueue(label: "context.dispose")
        let calls = Shared(0)
        let token = bus.on(Ping.self).atQueue(queue).next { _ in calls.increment() }
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        RequestID.$current.withValue("x") { bus.dispatch(Ping()) }
        token.dispose()
        gate.signal()
        #expect(drain(queue))
        #expect(calls.value == 0)
    }
}
