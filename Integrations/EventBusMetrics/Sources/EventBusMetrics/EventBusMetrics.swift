public import CoreMetrics
public import Dispatch
public import EventBus

/// An `EventBus`'s activity as swift-metrics metrics, fed by the bus's trace records
/// (a tracer added with `EventBus.addTracer(_:)`, beside the bus's other tracers).
///
/// | Label (`prefix.` + ) | Kind | Dimensions |
/// | --- | --- | --- |
/// | `dispatches` | counter | `event_type` |
/// | `deliveries` | counter | `event_type`, `delivery` (`synchronous` or `enqueued`) |
/// | `dead_events` | counter | `event_type` |
/// | `handler_errors` | counter | `event_type` |
/// | `reclaims` | counter (subscriptions whose owner was found gone) | `event_type` |
/// | `dropped_deliveries` | counter (deliveries a subscription's bound dropped: `EventBuffering`) | `event_type` |
/// | `enqueued_in_flight` | gauge (`EventBus.enqueuedDeliveryCount`, sampled at each dispatch and every `sampleInterval`) | none |
///
/// `event_type` is the event's type module-qualified, as `String(reflecting:)` spells it
/// (`MyApp.OrderPlaced`), the name every EventBus integration uses (log metadata, spans): label
/// values are bounded by the program's event types. Keys (`eventType`) never become labels. Metrics
/// are made once per event type and kept (a dictionary behind a lock, looked up once per record).
/// Every dead event is counted, whether or not the bus has a `deadEventHandler`.
///
/// The labels follow OpenTelemetry's conventions (dots, no `_total`); a Prometheus backend turns
/// the dots into underscores, and ``counterLabels(prefix:)`` lets its name sanitizer add `_total`
/// (see the package's README).
///
/// ```swift
/// let bus = EventBus()
/// let metrics = EventBusMetrics(bus: bus)   // MetricsSystem.factory's metrics
/// let token = bus.addTracer(metrics.tracer) // beside the bus's other tracers; token.remove() stops it
/// ```
///
/// The tracer runs on the thread that did the work, after the bus let go of its lock. Metrics
/// keep counting until the tracer is removed (its token's `remove()`); the bus is held weakly, and
/// the tracer holds this object, so `bus.addTracer(EventBusMetrics(bus: bus).tracer)` is enough: the
/// gauge's sampler lives as long as the tracer does (or the bus, if that ends first).
public final class EventBusMetrics: Sendable {
    /// The labels' prefix (`eventbus`).
    public let prefix: String
    private let factory: any MetricsFactory
    private weak let bus: EventBus?
    private let perType = Locked<[String: TypeMetrics]>([:])
    private let inFlight: Gauge
    /// Records `inFlight` every `sampleInterval`, until this object or the bus is gone.
    private let sampler: InFlightSampler?

    /// Metrics of `bus`, labelled `prefix.…`, made by `factory`; the `enqueued_in_flight` gauge is
    /// sampled every `sampleInterval` as well as at each dispatch, so that it reads 0 at most one
    /// interval (plus the timer's slack) after the queues drain, with no call from you.
    ///
    /// The sampler is a `DispatchSourceTimer` on a utility-QoS global queue. It holds this object
    /// weakly and stops when this object is deinitialized (its tracer removed and every other
    /// reference gone) or when it finds the bus gone. Each tick costs two atomic loads and one
    /// `Gauge.record` (the metrics backend's code, called with no lock held); a bus without metrics
    /// pays nothing for it.
    ///
    /// ```swift
    /// let metrics = EventBusMetrics(bus: bus, prefix: "orders.bus", sampleInterval: .milliseconds(250))
    /// ```
    ///
    /// - Parameters:
    ///   - bus: The bus whose queued work the `enqueued_in_flight` gauge samples (held weakly).
    ///   - prefix: The labels' prefix.
    ///   - factory: The metrics factory; `MetricsSystem.factory` (the bootstrapped one) by default.
    ///   - sampleInterval: How often the gauge is sampled besides each dispatch (1 s by default);
    ///     `nil` samples it only at dispatches and ``sample()``.
    public init(
        bus: EventBus, prefix: String = "eventbus", factory: any MetricsFactory = MetricsSystem.factory,
        sampleInterval: DispatchTimeInterval? = .seconds(1)
    ) {
        self.prefix = prefix
        self.factory = factory
        self.bus = bus
        inFlight = Gauge(label: "\(prefix).enqueued_in_flight", dimensions: [], factory: factory)
        sampler = sampleInterval.map { InFlightSampler(interval: $0) }
        sampler?.start { [weak self] in self?.sampleIfTheBusLives() ?? false }
    }

    /// The labels of the counters made with `prefix` (the gauge's is not among them): what a
    /// Prometheus name sanitizer needs to add the `_total` suffix to the counters alone.
    ///
    /// ```swift
    /// let counters = EventBusMetrics.counterLabels(prefix: "eventbus")   // "eventbus.dispatches", …
    /// factory.nameAndLabelSanitizer = { label, dimensions in
    ///     (counters.contains(label) ? label + "_total" : label, dimensions)
    /// }
    /// ```
    public static func counterLabels(prefix: String = "eventbus") -> Set<String> {
        Set(TypeMetrics.counterNames.map { "\(prefix).\($0)" })
    }

    /// The labels of this object's counters: ``counterLabels(prefix:)`` of its ``prefix``.
    ///
    /// ```swift
    /// print(metrics.counterLabels.sorted())   // ["eventbus.dead_events", "eventbus.deliveries", …]
    /// ```
    public var counterLabels: Set<String> { Self.counterLabels(prefix: prefix) }

    /// A tracer that records every record (see ``record(_:)``), to add with `addTracer(_:)`
    /// beside the bus's other tracers.
    ///
    /// ```swift
    /// let token = bus.addTracer(EventBusMetrics(bus: bus).tracer)
    /// ```
    public var tracer: @Sendable (TraceRecord) -> Void {
        { [self] record in self.record(record) }
    }

    /// Counts what `record` says happened. Call it from a tracer that does other things too.
    ///
    /// ```swift
    /// let metrics = EventBusMetrics(bus: bus)
    /// let token = bus.addTracer { record in   // beside the bus's other tracers
    ///     metrics.record(record)
    ///     print(record)
    /// }
    /// ```
    public func record(_ record: TraceRecord) {
        switch record {
        case .dispatched(let dispatched):
            let metrics = metrics(of: dispatched.typeName)
            metrics.dispatches.increment()
            if dispatched.delivered > 0 { metrics.synchronous.increment(by: dispatched.delivered) }
            if dispatched.enqueued > 0 { metrics.enqueued.increment(by: dispatched.enqueued) }
            sample()
        case .deadEvent(let dead):
            metrics(of: dead.typeName).deadEvents.increment()
        case .handlerError(let failure):
            metrics(of: failure.typeName).handlerErrors.increment()
        case .ended(let ended) where ended.reason == .ownerGone:
            metrics(of: ended.typeName).reclaims.increment()
        case .dropped(let drop):
            metrics(of: drop.typeName).dropped.increment()
        default:
            break
        }
    }

    /// Records the bus's `enqueuedDeliveryCount` in the `enqueued_in_flight` gauge now. Done at
    /// each dispatch and every `sampleInterval` already: call it only to read the gauge fresh (a
    /// test, an export about to be scraped) or when the sampler is off. O(1), on the calling thread.
    ///
    /// ```swift
    /// metrics.sample()
    /// ```
    public func sample() {
        _ = sampleIfTheBusLives()
    }

    /// ``sample()``; returns whether the bus still lives (the sampler stops when it does not).
    private func sampleIfTheBusLives() -> Bool {
        guard let bus else { return false }
        inFlight.record(bus.enqueuedDeliveryCount)
        return true
    }

    /// The metrics of the event type named `typeName`, made on first use.
    private func metrics(of typeName: String) -> TypeMetrics {
        if let known = perType.withLock({ $0[typeName] }) { return known }
        // Made outside the lock (the factory is user code), then kept unless another thread won.
        let made = TypeMetrics(prefix: prefix, typeName: typeName, factory: factory)
        return perType.withLock { table in
            if let known = table[typeName] { return known }
            table[typeName] = made
            return made
        }
    }
}

/// The metrics of one event type.
private struct TypeMetrics: Sendable {
    /// The counters' names, after the prefix.
    static let counterNames = [
        "dispatches", "deliveries", "dead_events", "handler_errors", "reclaims", "dropped_deliveries",
    ]

    let dispatches: Counter
    let synchronous: Counter
    let enqueued: Counter
    let deadEvents: Counter
    let handlerErrors: Counter
    let reclaims: Counter
    let dropped: Counter

    init(prefix: String, typeName: String, factory: any MetricsFactory) {
        let type = [("event_type", typeName)]
        dispatches = Counter(label: "\(prefix).dispatches", dimensions: type, factory: factory)
        synchronous = Counter(
            label: "\(prefix).deliveries", dimensions: type + [("delivery", "synchronous")], factory: factory)
        enqueued = Counter(
            label: "\(prefix).deliveries", dimensions: type + [("delivery", "enqueued")], factory: factory)
        deadEvents = Counter(label: "\(prefix).dead_events", dimensions: type, factory: factory)
        handlerErrors = Counter(label: "\(prefix).handler_errors", dimensions: type, factory: factory)
        reclaims = Counter(label: "\(prefix).reclaims", dimensions: type, factory: factory)
        dropped = Counter(label: "\(prefix).dropped_deliveries", dimensions: type, factory: factory)
    }
}
