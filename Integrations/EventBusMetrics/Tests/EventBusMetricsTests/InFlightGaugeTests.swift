import CoreMetrics
import Dispatch
import EventBus
import EventBusMetrics
import Foundation
import MetricsTestKit
import Testing

/// The `enqueued_in_flight` gauge is live: it reads 0 within a bound after the queues drain, with
/// no call to `sample()`, and the README's one-liner keeps the sampler running. Every blocking wait
/// (the gated queue, the polls) runs on a dispatch queue, off the cooperative pool, with a timeout.
@Suite("EventBusMetrics: the in-flight gauge samples itself")
struct InFlightGaugeTests {
    struct Ping: Event {}

    /// Makes 10 deliveries wait on a queue blocked by a gate, checks that the gauge reads 10, opens
    /// the gate, and returns whether the queue drained and whether the gauge read 0 within
    /// `bound` afterwards (polled, never calling `sample()`), and how long that took.
    static func drainTen(
        on bus: EventBus, gauge: @escaping @Sendable () throws -> TestRecorder, bound: DispatchTimeInterval
    ) async throws -> (atTen: Double?, drained: Bool, zeroAfter: Double?) {
        let queue = DispatchQueue(label: "metrics.blocked")
        let gate = DispatchSemaphore(value: 0)
        queue.async { _ = gate.wait(timeout: .now() + .seconds(20)) }
        let token = bus.on(Ping.self).atQueue(queue).next { _ in }
        defer { token.dispose() }
        for _ in 0..<10 { bus.dispatch(Ping()) }
        let recorder = try gauge()
        let atTen = recorder.lastValue
        gate.signal()
        let drained = await offThePool { drain(queue) }
        let zeroAfter = await offThePool { seconds(until: bound) { recorder.lastValue == 0 } }
        return (atTen, drained, zeroAfter)
    }

    @Test("the README's one-liner: the gauge reads 0 within 1 s (the default interval) after the queue drains")
    func oneLiner() async throws {
        let factory = TestMetrics()
        let bus = EventBus()
        let token = bus.addTracer(EventBusMetrics(bus: bus, factory: factory).tracer)
        let (atTen, drained, zeroAfter) = try await Self.drainTen(
            on: bus, gauge: { try factory.expectGauge("eventbus.enqueued_in_flight") }, bound: .seconds(5))
        #expect(atTen == 10)
        #expect(drained, "the gated queue did not drain within 10 s")
        #expect(zeroAfter != nil, "the gauge did not read 0 within 5 s of the queue draining")
        #expect((zeroAfter ?? .infinity) < 2, "the default interval is 1 s")
        print("in-flight gauge, one-liner: 10 deliveries held, 0 read \(zeroAfter ?? -1) s after the drain")
        token.remove()
    }

    @Test("a short interval: the gauge reads 0 within it after the queue drains, sample() never called")
    func shortInterval() async throws {
        let factory = TestMetrics()
        let bus = EventBus()
        let metrics = EventBusMetrics(bus: bus, factory: factory, sampleInterval: .milliseconds(20))
        let token = bus.addTracer(metrics.tracer)
        let (atTen, drained, zeroAfter) = try await Self.drainTen(
            on: bus, gauge: { try factory.expectGauge("eventbus.enqueued_in_flight") }, bound: .seconds(5))
        #expect(atTen == 10)
        #expect(drained, "the gated queue did not drain within 10 s")
        #expect(zeroAfter != nil, "the gauge did not read 0 within 5 s of the queue draining")
        print("in-flight gauge, 20 ms interval: 10 deliveries held, 0 read \(zeroAfter ?? -1) s after the drain")
        token.remove()
    }

    @Test("the sampler stops once the tracer is removed and the metrics object is gone")
    func stopsWithTheObject() async throws {
        let factory = TestMetrics()
        let bus = EventBus()
        weak var gone: EventBusMetrics?
        let token: EventTracerToken
        do {
            let metrics = EventBusMetrics(bus: bus, factory: factory, sampleInterval: .milliseconds(10))
            gone = metrics
            token = bus.addTracer(metrics.tracer)
        }
        let gauge = try factory.expectGauge("eventbus.enqueued_in_flight")
        let ticked = await offThePool { seconds(until: .seconds(5)) { gauge.values.count >= 3 } }
        #expect(ticked != nil, "the sampler did not tick while the tracer was added")
        #expect(gone != nil, "the tracer keeps the metrics object alive")
        token.remove()
        #expect(gone == nil, "removing the tracer released the metrics object")
        let afterRemoval = await offThePool { Self.settledCount(of: gauge) }
        #expect(afterRemoval.before == afterRemoval.after, "the sampler still ticked after the object was gone")
    }

    @Test("the sampler stops when the bus is gone")
    func stopsWithTheBus() async throws {
        let factory = TestMetrics()
        var bus: EventBus? = EventBus()
        let metrics = EventBusMetrics(bus: bus!, factory: factory, sampleInterval: .milliseconds(10))
        let gauge = try factory.expectGauge("eventbus.enqueued_in_flight")
        let ticked = await offThePool { seconds(until: .seconds(5)) { gauge.values.count >= 3 } }
        #expect(ticked != nil, "the sampler did not tick while the bus lived")
        bus = nil
        let afterBus = await offThePool { Self.settledCount(of: gauge) }
        #expect(afterBus.before == afterBus.after, "the sampler still ticked after the bus was gone")
        withExtendedLifetime(metrics) {}
    }

    /// The gauge's number of records after one more tick could have happened (50 ms), and 200 ms later.
    static func settledCount(of gauge: TestRecorder) -> (before: Int, after: Int) {
        Thread.sleep(forTimeInterval: 0.05)
        let before = gauge.values.count
        Thread.sleep(forTimeInterval: 0.2)
        return (before, gauge.values.count)
    }
}
