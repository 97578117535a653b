import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

@Suite("Dispose guarantee and bad input", .offThePool)
struct DisposeTests {
    @Test("After dispose returns, deliveries already enqueued on an atQueue queue do not run")
    func enqueuedDeliveriesAreDropped() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "blocked")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let calls = Shared(0)
        let token = bus.on(Ping.self).atQueue(queue).next { _ in calls.increment() }

        for _ in 0..<100 { bus.dispatch(Ping()) }
        token.dispose()
        gate.signal()

        #expect(drain(queue))
        #expect(calls.value == 0, "100 deliveries were enqueued before dispose; none may start after it")
    }

    @Test("Disposing twice is a no-op")
    func disposeTwice() {
        let bus = EventBus()
        let calls = Shared(0)
        let token = bus.on(Ping.self).next { _ in calls.increment() }
        let other = bus.on(Ping.self).next { _ in calls.increment() }
        token.dispose()
        token.dispose()
        #expect(token.isDisposed)
        #expect(!other.isDisposed)
        bus.dispatch(Ping())
        #expect(calls.value == 1)
        #expect(bus.subscriptionCount == 1)
    }

    @Test("Disposing the same tokens from two threads at once is safe and counts once")
    func disposeFromTwoThreads() {
        let bus = EventBus()
        let tokens = (0..<2_000).map { _ in bus.on(Ping.self).next { _ in } }
        let box = Shared(tokens)
        let finished = concurrently(2) { _ in
            for token in box.value { token.dispose() }
        }
        #expect(finished)
        #expect(tokens.allSatisfy { $0.isDisposed })
        #expect(bus.subscriptionCount == 0)
        print("disposeFromTwoThreads: 2 threads disposed the same \(tokens.count) tokens")
    }

    @Test("Dispose releases the handler and what it captured")
    func disposeReleasesHandler() {
        let bus = EventBus()
        weak var weakSentinel: Sentinel?
        let token: EventToken
        do {
            let sentinel = Sentinel()
            weakSentinel = sentinel
            token = bus.on(Ping.self).next { _ in withExtendedLifetime(sentinel) {} }
            bus.dispatch(Ping())  // builds a snapshot that also references the handler
        }
        #expect(weakSentinel != nil)
        token.dispose()
        #expect(weakSentinel == nil, "the token is still held, but the handler is gone")
    }

    @Test("A bus deallocated while tokens are alive: disposing them later is a no-op, and handlers are released")
    func busDeallocatedFirst() {
        weak var weakBus: EventBus?
        weak var weakSentinel: Sentinel?
        var token: EventToken?
        do {
            let bus = EventBus()
            weakBus = bus
            let sentinel = Sentinel()
            weakSentinel = sentinel
            token = bus.on(Ping.self).next { _ in withExtendedLifetime(sentinel) {} }
        }
        #expect(weakBus == nil)
        #expect(weakSentinel == nil)
        #expect(token?.isDisposed == true)
        token?.dispose()
        token?.dispose()
    }

    @Test("Subscription ids come from a counter and never collide, even across threads")
    func uniqueIDs() {
        let bus = EventBus()
        let ids = Shared<[UInt64]>([])
        let finished = concurrently(4) { _ in
            for _ in 0..<2_500 {
                let token = bus.on(Ping.self).next { _ in }
                ids.withLock { $0.append(token.id) }
                token.dispose()
            }
        }
        #expect(finished)
        #expect(ids.value.count == 10_000)
        #expect(Set(ids.value).count == 10_000)
        #expect(!ids.value.contains(0), "0 is reserved for inert tokens")
        print("uniqueIDs: 4 threads made \(ids.value.count) subscriptions, all ids distinct")
    }
}

@Suite("Bus teardown", .offThePool)
struct BusTeardownTests {
    @Test("A token kept after its bus is gone keeps nothing alive: the handlers are released with the bus")
    func heldTokenKeepsNothingAlive() {
        var bus: EventBus? = EventBus()
        let released = Shared(0)
        var tokens: [EventToken] = []
        for _ in 0..<3 {
            let capture = DeinitAction { released.increment() }
            tokens.append(bus!.on(Ping.self).next { _ in withExtendedLifetime(capture) {} })
        }
        bus = nil
        #expect(released.value == 3)
        #expect(tokens.allSatisfy { $0.isDisposed })
        for token in tokens { token.dispose() }
    }

    @Test("A token kept after its bus is gone keeps none of the bus's closures: tracer, error and dead-event handlers")
    func heldTokenKeepsNoBusClosures() {
        var bus: EventBus? = EventBus()
        let released = Shared(0)
        let tracerCapture = DeinitAction { released.increment() }
        let errorCapture = DeinitAction { released.increment() }
        let deadCapture = DeinitAction { released.increment() }
        let ended = Shared<[TraceRecord.Ended.Reason]>([])
        bus!.tracer = { record in
            withExtendedLifetime(tracerCapture) {}
            if case .ended(let end) = record { ended.withLock { $0.append(end.reason) } }
        }
        bus!.handlerErrorHandler = { _ in withExtendedLifetime(errorCapture) {} }
        bus!.deadEventHandler = { _ in withExtendedLifetime(deadCapture) {} }
        let token = bus!.on(Ping.self).next { _ in }
        let bag = DisposeBag()
        bus = nil
        #expect(released.value == 0, "the test still holds the captures")
        #expect(ended.value == [.busGone], "the tracer still hears the bus's own teardown")
        // The token still reaches the emptied index: every call finds the subscription ended.
        #expect(token.isDisposed)
        #expect(token.info == nil)
        token.disposed(by: bag)
        #expect(bag.count == 0)
        token.dispose()
        _ = consume tracerCapture
        _ = consume errorCapture
        _ = consume deadCapture
        #expect(released.value == 3, "the kept token holds none of the bus's closures")
        withExtendedLifetime(token) {}
    }

    @Test("Disposing a multi-key token ends every key, even with no bus to tell")
    func multiKeyDisposeEndsEveryKey() {
        let bus = EventBus()
        let token = bus.on(Chat.self).ofType("a").ofType("b").next { _ in }
        let received = Shared(0)
        let other = bus.on(Chat.self).ofType("c").ofType("d").next { _ in received.increment() }
        token.dispose()
        #expect(token.isDisposed)
        #expect(bus.subscriptionCount == 1)
        other.dispose()
        bus.dispatch(Chat(room: "c", text: ""))
        bus.dispatch(Chat(room: "d", text: ""))
        #expect(received.value == 0 && bus.subscriptionCount == 0)
    }
}
