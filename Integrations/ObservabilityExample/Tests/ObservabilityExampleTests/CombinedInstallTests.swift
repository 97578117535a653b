import CoreMetrics
import Dispatch
import EventBus
import EventBusLogging
import EventBusMetrics
import EventBusTracing
import InMemoryTracing
import Logging
import MetricsTestKit
import Testing
import Tracing

/// The Logging, Metrics and Tracing integrations installed on one bus by their READMEs' lines,
/// copied as written there (`.ci/run`'s observability stage checks that each README's lines are in
/// this file), in two orders: each must still work. Following the Logging README and then the
/// Metrics README once dropped logging silently (both set `bus.tracer`, the second replaced the
/// first); a line that replaces another fails one of these tests.
@Suite("Logging, metrics and tracing installed together by their READMEs")
struct CombinedInstallTests {
    struct LoggingFirst: Event { let id: Int }
    struct TracingFirst: Event { let id: Int }

    @Test("the Logging README's lines, then the Metrics README's, then the Tracing README's: all three work")
    func loggingThenMetricsThenTracing() async throws {
        let log = Capture()
        var logger = Logger(label: "app.events") { _ in log }
        logger.logLevel = .debug
        let bus = Installed.bus()

        // Integrations/EventBusLogging/README.md
        let logging = bus.addTracer(EventBusLogTracer(logger: logger, level: .debug).tracer)  // beside other tracers
        // Integrations/EventBusMetrics/README.md
        let metrics = EventBusMetrics(bus: bus)  // MetricsSystem.factory's metrics
        let token = bus.addTracer(metrics.tracer)  // beside the bus's other tracers; token.remove() stops it
        // Integrations/EventBusTracing/README.md
        bus.installTracing()  // ServiceContext across hops; a `process` span per delivery that leaves the thread

        try await expectEachWorks(bus, LoggingFirst(id: 1), log: log)
        logging.remove()
        token.remove()
    }

    @Test("the Tracing README's lines, then the Metrics README's, then the Logging README's: all three work")
    func tracingThenMetricsThenLogging() async throws {
        let log = Capture()
        var logger = Logger(label: "app.events") { _ in log }
        logger.logLevel = .debug
        let bus = Installed.bus()

        // Integrations/EventBusTracing/README.md
        bus.installTracing()  // ServiceContext across hops; a `process` span per delivery that leaves the thread
        // Integrations/EventBusMetrics/README.md
        let metrics = EventBusMetrics(bus: bus)  // MetricsSystem.factory's metrics
        let token = bus.addTracer(metrics.tracer)  // beside the bus's other tracers; token.remove() stops it
        // Integrations/EventBusLogging/README.md
        let logging = bus.addTracer(EventBusLogTracer(logger: logger, level: .debug).tracer)  // beside other tracers

        try await expectEachWorks(bus, TracingFirst(id: 1), log: log)
        logging.remove()
        token.remove()
    }

    /// Dispatches `event` as a request handler would (`tracedDispatch`) to a synchronous and a
    /// queued subscriber, and expects the log lines, the counters and the spans of each integration.
    func expectEachWorks<E: Event>(_ bus: EventBus, _ event: E, log: Capture) async throws {
        let queue = DispatchQueue(label: "observability.billing")
        let handled = Counter()
        let tokens = [
            bus.on(E.self).next { _ in handled.increment() },
            bus.on(E.self).atQueue(queue).next { _ in handled.increment() },
        ]
        bus.tracedDispatch(event)
        let type = String(reflecting: E.self)
        #expect(await eventually { handled.value == 2 && Installed.spans(named: "process \(type)") == 1 })

        // Logging: one line per record, among them the dispatch's.
        let dispatched = log.messages.filter { $0.hasPrefix("dispatched \(type): 1 delivered, 1 enqueued") }
        #expect(dispatched.count == 1, "logging: no dispatch line, in \(log.messages)")

        // Metrics: the dispatch and both deliveries counted, under the event's type.
        let dimensions = [("event_type", type)]
        let dispatches = try Installed.metrics.expectCounter("eventbus.dispatches", dimensions)
        #expect(dispatches.totalValue == 1, "metrics: the dispatch was not counted")
        let enqueued = try Installed.metrics.expectCounter(
            "eventbus.deliveries", dimensions + [("delivery", "enqueued")])
        #expect(enqueued.totalValue == 1, "metrics: the queued delivery was not counted")

        // Tracing: a `publish` span, and the queued delivery's `process` span, its child.
        #expect(Installed.spans(named: "publish \(type)") == 1, "tracing: no publish span")
        let spans = Installed.tracer.finishedSpans
        let publish = try #require(spans.first { $0.operationName == "publish \(type)" })
        let process = try #require(spans.first { $0.operationName == "process \(type)" })
        #expect(process.traceID == publish.traceID)
        #expect(process.parentSpanID == publish.spanID)

        for token in tokens { token.dispose() }
    }
}

/// swift-metrics' and swift-distributed-tracing's process-wide systems, bootstrapped once for this
/// test process: the Metrics and Tracing READMEs' lines use `MetricsSystem.factory` and
/// `InstrumentationSystem.tracer`, and are copied as written. Each test dispatches an event type
/// of its own, so the tests' counters and spans stay apart.
enum Installed {
    static let metrics = TestMetrics()
    static let tracer = InMemoryTracer()
    private static let bootstrapped: Void = {
        MetricsSystem.bootstrap(metrics)
        InstrumentationSystem.bootstrap(tracer)
    }()

    /// A fresh bus, the systems bootstrapped.
    static func bus() -> EventBus {
        _ = bootstrapped
        return EventBus()
    }

    /// How many finished spans are named `name`.
    static func spans(named name: String) -> Int {
        tracer.finishedSpans.filter { $0.operationName == name }.count
    }
}

/// A log handler that keeps every message.
final class Capture: LogHandler, @unchecked Sendable {
    // @unchecked Sendable: `stored` is only touched on `lock`, a serial queue.
    private let lock = DispatchQueue(label: "observability.capture")
    private var stored: [String] = []
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    var messages: [String] { lock.sync { stored } }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let message = "\(event.message)"
        lock.sync { stored.append(message) }
    }
}

/// A count that handlers on any thread increment.
final class Counter: @unchecked Sendable {
    // @unchecked Sendable: `count` is only touched on `lock`, a serial queue.
    private let lock = DispatchQueue(label: "observability.counter")
    private var count = 0

    func increment() { lock.sync { count += 1 } }
    var value: Int { lock.sync { count } }
}

/// Polls `condition` for up to 10 s.
func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<10_000 {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
}
