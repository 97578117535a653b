import Testing

@testable import EventBus

/// A dispatch of a type nobody subscribes to takes no lock (after the type's first dispatch): what
/// it must still do.
@Suite("Core: dispatches nobody listens to", .tags(.stress), .offThePool)
struct IdleDispatchTests {
    struct Nobody: Event {}
    struct Beat: Event {}

    @Test("A dead-event handler set after a type was dispatched to nobody hears every later dispatch of it")
    func deadEventHandlerSetLater() {
        let bus = EventBus()
        for _ in 0..<20 { bus.dispatch(Nobody()) }
        let dead = Shared(0)
        bus.deadEventHandler = { _ in dead.increment() }
        for _ in 0..<5 { bus.dispatch(Nobody()) }
        #expect(dead.value == 5)
        bus.deadEventHandler = nil
        for _ in 0..<5 { bus.dispatch(Nobody()) }
        #expect(dead.value == 5)
    }

    @Test("A subscription made after dispatches nobody received gets the next dispatch, from any thread")
    func subscriberAfterIdleDispatches() {
        let bus = EventBus()
        let received = Shared(0)
        for _ in 0..<20 { bus.dispatch(Nobody()) }
        let subscribed = onAnotherThread {
            _ = bus.on(Nobody.self).next { _ in received.increment() }
        }
        #expect(subscribed, "the subscribing thread did not finish in time")
        bus.dispatch(Nobody())
        #expect(received.value == 1)
    }

    @Test("Dispatches nobody receives still pay the sweep's share: a dead owner's handler is released")
    func idleDispatchesSweep() {
        let bus = EventBus()
        var owner: Sentinel? = Sentinel()
        let handlerAlive = subscribeCapturingSentinel { handler in
            bus.on(Beat.self).freeWith(owner).next { _, event in handler(event) }
        }
        owner = nil
        #expect(handlerAlive())
        let turn = bus.core.dispatchesPerSweepTurn
        // One sweep turn, plus the dispatches whose share is paid by a later one.
        for _ in 0..<(turn + 8) { bus.dispatch(Nobody()) }
        print("idle dispatches: \(turn + 8) dispatches of a type nobody subscribes to released a dead owner's handler")
        #expect(!handlerAlive(), "the sweep did not reclaim the handler within a turn of idle dispatches")
        #expect(bus.subscriptionCount == 0)
    }
}
