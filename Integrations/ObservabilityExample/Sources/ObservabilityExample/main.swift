import Dispatch
import EventBus
import EventBusLogging
import EventBusMetrics
import EventBusTracing
import Logging
import OTel
import ServiceLifecycle
import Tracing

struct OrderPlaced: Event { let id: Int }

// Traces, metrics and logs to an OpenTelemetry collector on this machine, over OTLP/HTTP.
var config = OTel.Configuration.default
config.serviceName = "orders"
config.propagators = [.traceContext]  // W3C `traceparent` (and `tracestate`); swift-otel has no baggage propagator
config.traces.otlpExporter.endpoint = "http://127.0.0.1:4318/v1/traces"  // set: used as is, path included
config.metrics.otlpExporter.endpoint = "http://127.0.0.1:4318/v1/metrics"
config.logs.otlpExporter.endpoint = "http://127.0.0.1:4318/v1/logs"
let observability = try OTel.bootstrap(configuration: config)  // InstrumentationSystem, MetricsSystem, LoggingSystem

let logger = Logger(label: "orders")
let bus = EventBus()
bus.installTracing()  // ServiceContext across hops; a `process` span per delivery that leaves the thread
let metrics = EventBusMetrics(bus: bus)  // MetricsSystem.factory's metrics; the gauge samples itself
let metering = bus.addTracer(metrics.tracer)  // beside the bus's other tracers
let logging = bus.addTracer(EventBusLogTracer(logger: logger, level: .info).tracer)  // beside other tracers

let billing = DispatchQueue(label: "billing")
let charges = bus.on(OrderPlaced.self).atQueue(billing).next { [logger] order in
    logger.info("charged order \(order.id)")  // in a `process` span, in the request's trace
}

// The route. In a Hummingbird or Vapor app this is the body of `router.post("orders")`, which the
// framework's tracing middleware runs in the request's span; here a plain function, its `withSpan`
// standing in for the middleware, so that the example builds without a web framework.
func placeOrder(id: Int, on bus: EventBus) {
    withSpan("POST /orders", ofKind: .server) { _ in
        bus.tracedDispatch(OrderPlaced(id: id))  // a `publish` span, child of the request's span
    }
}

// Stands in for the HTTP server: one order a second until the group shuts down.
struct Storefront: Service {
    let bus: EventBus

    func run() async throws {
        var id = 0
        while !Task.isShuttingDownGracefully {
            id += 1
            placeOrder(id: id, on: bus)
            try await Task.sleep(for: .seconds(1))
        }
    }
}

// Observability first: a group shuts its services down in reverse order, so it exports last.
let group = ServiceGroup(
    services: [observability, Storefront(bus: bus)],
    gracefulShutdownSignals: [.sigterm, .sigint],
    logger: logger
)
try await group.run()
