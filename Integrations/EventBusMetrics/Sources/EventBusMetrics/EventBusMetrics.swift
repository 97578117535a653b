public import CoreMetrics
public import EventBus
import Foundation

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
/// | `enqueued_in_flight` | gauge (`EventBus.enqueuedDeliveryCount`, sampled at each dispatch and by ``sample()``) | none |
///
/// `event_type` is the event's type as `String(reflecting:)` spells it: label values are bounded by
/// the program's event types. Keys (`eventType`) never become labels. Metrics are made once per event
/// type and kept (a dictionary behind a lock, looked up once per record).
///
/// ```swift
/// let bus = EventBus()
/// let metrics = EventBusMetrics(bus: bus)   // MetricsSystem.factory's metrics
/// let token = bus.addTracer(metrics.tracer) // beside the bus's other tracers; token.remove() stops it
/// ```
///
/// The tracer runs on the thread that did the work, after the bus let go of its lock. Metrics
/// keep counting until the tracer is removed (its token's `remove()`); the bus is held weakly.
public final class EventBusMetrics: Sendable {
    /// The labels' prefix (`eventbus`).
    public let prefix: String
    private let factory: any MetricsFactory
    private weak let bus: EventBus?
    private let perType = Locked<[String: TypeMetrics]>([:])
    private let inFlight: Gauge

    /// Metrics of `bus`, labelled `prefix.…`, made by `factory`.
    ///
    /// ```swift
    /// let metrics = EventBusMetrics(bus: bus, prefix: "orders.bus")
    /// ```
    ///
    /// - Parameters:
    ///   - bus: The bus whose queued work the `enqueued_in_flight` gauge samples (held weakly).
    ///   - prefix: The labels' prefix.
    ///   - factory: The metrics factory; `MetricsSystem.factory` (the bootstrapped one) by default.
    public init(bus: EventBus, prefix: String = "eventbus", factory: any MetricsFactory = MetricsSystem.factory) {
        self.prefix = prefix
        self.factory = factory
        self.bus = bus
        inFlight = Gauge(label: "\(prefix).enqueued_in_flight", dimensions: [], factory: factory)
    }

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
    /// bus.tracer = { record in
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
            metrics(of: String(reflecting: type(of: dead.event))).deadEvents.increment()
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

    /// Records the bus's `enqueuedDeliveryCount` in the `enqueued_in_flight` gauge now (also done
    /// at each dispatch): call it periodically to see the queues drain. O(1).
    ///
    /// ```swift
    /// metrics.sample()
    /// ```
    public func sample() {
        guard let bus else { return }
        inFlight.record(bus.enqueuedDeliveryCount)
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

/// A value behind an `NSLock`.
private final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched in `withLock`, holding `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
