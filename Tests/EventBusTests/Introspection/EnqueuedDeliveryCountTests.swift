import Dispatch
import Testing

@testable import EventBus

/// `EventBus.enqueuedDeliveryCount`: the deliveries waiting on their queue, what a metrics gauge
/// samples.
@Suite("Enqueued delivery count", .offThePool)
struct EnqueuedDeliveryCountTests {
    struct Ping: Event {}

    @Test("counts the deliveries enqueued and not yet run, and comes back to 0 once their queue ran them")
    func countsWaitingDeliveries() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "count.gated")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let token = bus.on(Ping.self).atQueue(queue).next { _ in }
        let synchronous = bus.on(Ping.self).next { _ in }
        #expect(bus.enqueuedDeliveryCount == 0)
        bus.dispatch(Ping())
        bus.dispatch(Ping())
        #expect(bus.enqueuedDeliveryCount == 2, "synchronous deliveries are not counted")
        gate.signal()
        #expect(drain(queue))
        #expect(bus.enqueuedDeliveryCount == 0)
        token.dispose()
        synchronous.dispose()
    }
}
