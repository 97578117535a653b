public import EventBus
public import Logging

/// Turns an ``EventBus/EventBus``'s ``TraceRecord``s into swift-log calls: one log line per record,
/// with its fields as metadata.
///
/// Dispatches, subscriptions and ends are logged at `level` (`.debug` by default); dead events at
/// `level` too (every one, whether or not the bus has a `deadEventHandler`); handler errors at
/// `.error`. The tracer runs on the thread that did the work, after the bus let go of its lock; the
/// `Logger`'s handler does the rest.
///
/// `event.type` is the event's type module-qualified, as `String(reflecting:)` spells it
/// (`MyApp.LoginEvent`), in every record: the name the metrics integration's `event_type` and the
/// tracing integration's spans use too.
///
/// ```swift
/// import EventBus
/// import EventBusLogging
/// import Logging
///
/// let bus = EventBus()
/// let logging = bus.addTracer(EventBusLogTracer(logger: Logger(label: "app.events"), level: .debug).tracer)
/// bus.dispatch(LoginEvent(userID: "42"))
/// // debug app.events: [event.type: MyApp.LoginEvent, event.delivered: 0, …] dispatched MyApp.LoginEvent: 0 delivered, 0 enqueued
/// ```
public struct EventBusLogTracer: Sendable {
    /// The logger records go to.
    public let logger: Logger
    /// The level of every record but handler errors (logged at `.error`).
    public let level: Logger.Level

    /// A tracer that logs to `logger` at `level`.
    ///
    /// ```swift
    /// let tracer = EventBusLogTracer(logger: Logger(label: "app.events"))
    /// ```
    public init(logger: Logger, level: Logger.Level = .debug) {
        self.logger = logger
        self.level = level
    }

    /// The closure to add to a bus or chain node with `addTracer(_:)`, beside its other tracers
    /// (metrics, your own); the returned token's `remove()` takes it off alone.
    ///
    /// ```swift
    /// let logging = bus.addTracer(EventBusLogTracer(logger: logger).tracer)
    /// ```
    public var tracer: @Sendable (TraceRecord) -> Void {
        let logger = logger
        let level = level
        return { record in Self.log(record, to: logger, at: level) }
    }

    /// Logs one record: its `description` as the message, its fields as metadata.
    ///
    /// ```swift
    /// EventBusLogTracer.log(record, to: logger, at: .info)
    /// ```
    public static func log(_ record: TraceRecord, to logger: Logger, at level: Logger.Level) {
        let recordLevel: Logger.Level
        if case .handlerError = record { recordLevel = .error } else { recordLevel = level }
        // Checked first: a disabled level builds no metadata.
        guard logger.logLevel <= recordLevel else { return }
        logger.log(level: recordLevel, "\(record.description)", metadata: metadata(of: record))
    }

    /// The fields of `record`, as swift-log metadata (keys prefixed `event.`, `subscription.` or `chain.`).
    ///
    /// ```swift
    /// print(EventBusLogTracer.metadata(of: record)["event.type"] ?? "")
    /// ```
    public static func metadata(of record: TraceRecord) -> Logger.Metadata {
        switch record {
        case .dispatched(let dispatched):
            var metadata: Logger.Metadata = [
                "event.type": "\(dispatched.typeName)", "event.delivered": "\(dispatched.delivered)",
                "event.enqueued": "\(dispatched.enqueued)", "event.stopped": "\(dispatched.isStopped)",
            ]
            if let key = dispatched.key { metadata["event.key"] = "\(key)" }
            if let sticky = dispatched.sticky { metadata["event.sticky"] = "\(sticky)" }
            return metadata
        case .subscribed(let info):
            return [
                "subscription.id": "\(info.id)", "event.type": "\(info.typeName)",
                "subscription.keys": .array(info.keys.map { .string($0) }),
                "subscription.delivery": "\(info.delivery)", "subscription.callSite": "\(info.callSite)",
            ]
        case .ended(let ended):
            return [
                "subscription.id": "\(ended.id)", "event.type": "\(ended.typeName)",
                "subscription.endReason": "\(ended.reason)", "subscription.callSite": "\(ended.callSite)",
            ]
        case .deadEvent(let dead):
            var metadata: Logger.Metadata = ["event.type": "\(dead.typeName)"]
            if let key = dead.key { metadata["event.key"] = "\(key)" }
            return metadata
        case .handlerError(let error):
            return [
                "subscription.id": "\(error.subscriptionID)", "event.type": "\(error.typeName)",
                "error": "\(error.error)", "subscription.callSite": "\(error.fileID):\(error.line)",
            ]
        case .chainHop(let hop):
            return [
                "event.type": "\(hop.typeName)", "chain.node": "\(hop.node)", "chain.depth": "\(hop.depth)",
                "event.delivered": "\(hop.delivered)", "chain.status": "\(hop.status)",
            ]
        case .dropped(let drop):
            return [
                "subscription.id": "\(drop.subscriptionID)", "event.type": "\(drop.typeName)",
                "subscription.buffering": "\(drop.buffering)", "event.droppedTotal": "\(drop.total)",
            ]
        }
    }
}
