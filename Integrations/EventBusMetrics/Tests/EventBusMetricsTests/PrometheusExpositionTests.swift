#if canImport(Prometheus)
    import CoreMetrics
    import EventBus
    import EventBusMetrics
    import Prometheus
    import Testing

    /// What a Prometheus user scrapes: swift-prometheus 2.4.1's `PrometheusMetricsFactory` keeps the
    /// swift-metrics labels (its `nameAndLabelSanitizer` is the identity by default), its registry turns
    /// every character a metric name may not have (the dots) into `_` and appends nothing. So the
    /// counters render as `eventbus_dispatches`, typed `counter`, without Prometheus's `_total` suffix,
    /// unless the sanitizer the README shows adds it.
    @Suite("EventBusMetrics: the Prometheus exposition text")
    struct PrometheusExpositionTests {
        struct Ping: Event {
            var key: String?
            var eventType: String? { key }
        }

        struct Unheard: Event {}

        struct Failure: Error {}

        /// Dispatches to a synchronous subscriber (keyed and not), a handler that throws, and a type
        /// nobody hears (no dead-event handler set), through metrics made by `factory`; returns the
        /// exposition text.
        static func scrape(_ registry: PrometheusCollectorRegistry, _ factory: PrometheusMetricsFactory) -> String {
            let bus = EventBus()
            bus.handlerErrorHandler = { _ in }
            let token = bus.addTracer(EventBusMetrics(bus: bus, factory: factory, sampleInterval: nil).tracer)
            let subscriptions = [
                bus.on(Ping.self).next { _ in },
                bus.on(Ping.self).ofType("secret-key").next { (_: Ping) throws in throw Failure() },
            ]
            bus.dispatch(Ping(key: "secret-key"))
            bus.dispatch(Ping())
            bus.dispatch(Unheard())
            bus.dispatch(Unheard())
            for subscription in subscriptions { subscription.dispose() }
            token.remove()
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return String(decoding: buffer, as: UTF8.self)
        }

        /// The `# TYPE` lines of `text`, sorted (an event type's counters are all made at its first
        /// record, so every counter has a line).
        static func types(_ text: String) -> [String] {
            text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map(String.init).sorted()
        }

        /// The sample line of `name` whose labels contain each of `labels`, if any.
        static func sample(_ text: String, _ name: String, _ labels: String...) -> String? {
            text.split(separator: "\n").map(String.init).first { line in
                line.hasPrefix(name + "{") && labels.allSatisfy { line.contains($0) }
            }
        }

        let ping = #"event_type="\#(String(reflecting: Ping.self))""#
        let unheard = #"event_type="\#(String(reflecting: Unheard.self))""#

        @Test("by default the counters render as eventbus_<name>, typed counter, without _total")
        func defaultNames() {
            let registry = PrometheusCollectorRegistry()
            let text = Self.scrape(registry, PrometheusMetricsFactory(registry: registry))
            print("Prometheus exposition, default factory:\n\(text)")
            #expect(
                Self.types(text) == [
                    "# TYPE eventbus_dead_events counter",
                    "# TYPE eventbus_deliveries counter",
                    "# TYPE eventbus_dispatches counter",
                    "# TYPE eventbus_dropped_deliveries counter",
                    "# TYPE eventbus_enqueued_in_flight gauge",
                    "# TYPE eventbus_handler_errors counter",
                    "# TYPE eventbus_reclaims counter",
                ])
            #expect(Self.sample(text, "eventbus_dispatches", ping)?.hasSuffix(" 2") == true)
            #expect(
                Self.sample(text, "eventbus_dead_events", unheard)?.hasSuffix(" 2") == true, "no dead-event handler set"
            )
            #expect(Self.sample(text, "eventbus_handler_errors", ping)?.hasSuffix(" 1") == true)
            #expect(Self.sample(text, "eventbus_deliveries", ping, #"delivery="synchronous""#)?.hasSuffix(" 3") == true)
            #expect(!text.contains("secret-key"), "a key became a label value")
            #expect(!text.contains("_total"))
        }

        @Test("with the README's sanitizer the counters end in _total, the gauge does not")
        func totalSuffix() {
            let registry = PrometheusCollectorRegistry()
            // As the README shows it.
            var factory = PrometheusMetricsFactory(registry: registry)
            let counters = EventBusMetrics.counterLabels()  // "eventbus.dispatches", …
            factory.nameAndLabelSanitizer = { label, dimensions in
                (counters.contains(label) ? label + "_total" : label, dimensions)
            }
            let text = Self.scrape(registry, factory)
            print("Prometheus exposition, _total sanitizer:\n\(text)")
            #expect(
                Self.types(text) == [
                    "# TYPE eventbus_dead_events_total counter",
                    "# TYPE eventbus_deliveries_total counter",
                    "# TYPE eventbus_dispatches_total counter",
                    "# TYPE eventbus_dropped_deliveries_total counter",
                    "# TYPE eventbus_enqueued_in_flight gauge",
                    "# TYPE eventbus_handler_errors_total counter",
                    "# TYPE eventbus_reclaims_total counter",
                ])
            #expect(Self.sample(text, "eventbus_dispatches_total", ping)?.hasSuffix(" 2") == true)
            #expect(Self.sample(text, "eventbus_dead_events_total", unheard)?.hasSuffix(" 2") == true)
            #expect(!text.contains("secret-key"), "a key became a label value")
        }

        @Test("the counter labels are the six counters of the prefix, the gauge's not among them")
        func counterLabels() {
            let metrics = EventBusMetrics(bus: EventBus(), prefix: "orders.bus", sampleInterval: nil)
            #expect(
                metrics.counterLabels.sorted() == [
                    "orders.bus.dead_events", "orders.bus.deliveries", "orders.bus.dispatches",
                    "orders.bus.dropped_deliveries", "orders.bus.handler_errors", "orders.bus.reclaims",
                ])
            #expect(metrics.counterLabels == EventBusMetrics.counterLabels(prefix: "orders.bus"))
        }
    }
#endif
