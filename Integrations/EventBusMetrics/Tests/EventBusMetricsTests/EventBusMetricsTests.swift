import CoreMetrics
import Dispatch
import EventBus
import EventBusMetrics
import MetricsTestKit
import Testing

/// `EventBusMetrics` against swift-metrics' `TestMetrics`: what each trace record counts, under
/// which labels and dimensions, and that keys never become labels.
@Suite("EventBusMetrics")
struct EventBusMetricsTests {
    struct Ping: Event {
        var key: String?
        var eventType: String? { key }
    }

    struct Unheard: Event {}

    struct Failure: Error {}

    final class Owner: Sendable {}

    let pingType = [("event_type", String(reflecting: Ping.self))]

    @Test("dispatches and deliveries are counted per event type, synchronous and enqueued apart; keys are no label")
    func dispatchesAndDeliveries() throws {
        let factory = TestMetrics()
        let bus = EventBus()
        _ = bus.addTracer(EventBusMetrics(bus: bus, factory: factory).tracer)
        let queue = DispatchQueue(label: "metrics.work")
        let tokens = [
            bus.on(Ping.self).next { _ in },
            bus.on(Ping.self).ofType("a").next { _ in },
            bus.on(Ping.self).atQueue(queue).next { _ in },
        ]
        bus.dispatch(Ping(key: "a"))
        bus.dispatch(Ping(key: "b"))
        bus.dispatch(Ping())
        #expect(drain(queue))
        #expect(try factory.expectCounter("eventbus.dispatches", pingType).totalValue == 3)
        #expect(
            try factory.expectCounter("eventbus.deliveries", pingType + [("delivery", "synchronous")]).totalValue == 4)
        #expect(try factory.expectCounter("eventbus.deliveries", pingType + [("delivery", "enqueued")]).totalValue == 3)
        let dimensions = factory.counters.flatMap(\.dimensions)
        #expect(!dimensions.contains { $0.1 == "a" || $0.1 == "b" }, "a key never becomes a label value")
        for token in tokens { token.dispose() }
    }

    @Test("dead events, handler errors and reclaimed subscriptions are counted per event type")
    func deadErrorsAndReclaims() throws {
        let factory = TestMetrics()
        let bus = EventBus()
        _ = bus.addTracer(EventBusMetrics(bus: bus, prefix: "app.bus", factory: factory).tracer)
        bus.handlerErrorHandler = { _ in }
        bus.dispatch(Unheard())  // counted with no deadEventHandler set
        let token = bus.on(Ping.self).next { (_: Ping) throws in throw Failure() }
        var owner: Owner? = Owner()
        bus.on(Ping.self).freeWith(owner!).next { _, _ in }
        owner = nil
        bus.dispatch(Ping())  // meets the gone owner: reclaimed
        bus.purge()
        let unheard = [("event_type", String(reflecting: Unheard.self))]
        #expect(try factory.expectCounter("app.bus.dead_events", unheard).totalValue == 1)
        #expect(try factory.expectCounter("app.bus.handler_errors", pingType).totalValue == 1)
        #expect(try factory.expectCounter("app.bus.reclaims", pingType).totalValue == 1)
        token.dispose()
    }

    @Test("every dead event is counted, whether or not the bus has a deadEventHandler")
    func deadEventsWithoutAHandler() throws {
        let factory = TestMetrics()
        let bus = EventBus()
        _ = bus.addTracer(EventBusMetrics(bus: bus, factory: factory, sampleInterval: nil).tracer)
        for _ in 0..<100 { bus.dispatch(Unheard()) }
        bus.deadEventHandler = { _ in }
        for _ in 0..<100 { bus.dispatch(Unheard()) }
        bus.deadEventHandler = nil
        for _ in 0..<100 { bus.dispatch(Unheard()) }
        let unheard = [("event_type", String(reflecting: Unheard.self))]
        #expect(try factory.expectCounter("eventbus.dead_events", unheard).totalValue == 300)
    }

    @Test("deliveries a bounded subscription drops are counted per event type")
    func droppedDeliveries() throws {
        let factory = TestMetrics()
        let bus = EventBus()
        _ = bus.addTracer(EventBusMetrics(bus: bus, factory: factory).tracer)
        let queue = DispatchQueue(label: "metrics.bounded")
        queue.suspend()
        let token = bus.on(Ping.self).atQueue(queue).buffering(.bufferingNewest(2)).next { _ in }
        for _ in 0..<5 { bus.dispatch(Ping()) }
        #expect(try factory.expectCounter("eventbus.dropped_deliveries", pingType).totalValue == 3)
        queue.resume()
        #expect(drain(queue))
        token.dispose()
    }

    @Test("with the sampler off, the in-flight gauge follows each dispatch and sample()")
    func inFlightGauge() throws {
        let factory = TestMetrics()
        let bus = EventBus()
        let metrics = EventBusMetrics(bus: bus, factory: factory, sampleInterval: nil)
        _ = bus.addTracer(metrics.tracer)
        let queue = DispatchQueue(label: "metrics.gated")
        let gate = DispatchSemaphore(value: 0)
        queue.async { _ = gate.wait(timeout: .now() + .seconds(10)) }
        let token = bus.on(Ping.self).atQueue(queue).next { _ in }
        bus.dispatch(Ping())
        bus.dispatch(Ping())
        let gauge = try factory.expectGauge("eventbus.enqueued_in_flight")
        #expect(gauge.lastValue == 2)
        gate.signal()
        #expect(drain(queue))
        metrics.sample()
        #expect(gauge.lastValue == 0)
        token.dispose()
    }

    @Test("added beside other tracers, it counts without displacing them, and stops alone when removed")
    func besideOtherTracers() throws {
        let factory = TestMetrics()
        let bus = EventBus()
        let othersFactory = TestMetrics()
        let others = Counter(label: "others", factory: othersFactory)  // what the other tracers saw
        bus.tracer = { _ in others.increment() }  // the app's own, in the property's slot
        let logging = bus.addTracer { _ in others.increment() }  // another integration's
        let metrics = bus.addTracer(EventBusMetrics(bus: bus, factory: factory).tracer)
        bus.dispatch(Ping())  // reaches nobody: a dispatch record and a dead event
        let dispatches = try factory.expectCounter("eventbus.dispatches", pingType)
        #expect(dispatches.totalValue == 1)
        let seenByOthers = try othersFactory.expectCounter("others")
        #expect(seenByOthers.totalValue == 4, "the property's tracer and the other added one still ran")
        metrics.remove()
        bus.dispatch(Ping())
        #expect(dispatches.totalValue == 1, "removed: counts no more")
        #expect(seenByOthers.totalValue == 8)
        logging.remove()
    }
}

/// Waits until every block enqueued on `queue` before this call has run (10 s at most).
func drain(_ queue: DispatchQueue) -> Bool {
    let done = DispatchSemaphore(value: 0)
    queue.async { done.signal() }
    return done.wait(timeout: .now() + .seconds(10)) == .success
}
