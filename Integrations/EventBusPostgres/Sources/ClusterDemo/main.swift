// Two app instances, "orders" and "mail", on one PostgreSQL database, in one run: each has its own
// bus, PostgreSQL client and bridge, run as swift-service-lifecycle services. Then a billing service
// of two instances shares its work as a consumer group (durable delivery), and one of them stops.
//
//   Integrations/EventBusPostgres/scripts/with-postgres.sh \
//       swift run --package-path Integrations/EventBusPostgres ClusterDemo
//
// (or set EVENTBUS_POSTGRES_URL=postgres://user@host:port/database yourself).
import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

// The events the instances exchange: Codable, registered under explicit wire names.
struct OrderShipped: Event, Codable {
    let orderID: Int
}

struct CustomerNotified: Event, Codable {
    let orderID: Int
    let channel: String
    var eventType: String { channel }  // the key travels too: subscribers can pick "email"
}

/// Work for the billing service, keyed by customer: a consumer group partitions by the key.
struct InvoiceRequested: Event, Codable {
    let customer: String
    let invoice: Int
    var eventType: String { customer }
}

/// One app instance: a bus of its own, a client, a bridge, and a service group running both.
struct Instance {
    let name: String
    let bus = EventBus()
    let client: PostgresClient
    let bridge: PostgresEventBridge
    let group: ServiceGroup

    /// `delivery`: at most once on "demo_events" by default; durable ones use "demo_billing".
    init(name: String, url: DatabaseURL, delivery: PostgresEventBridge.Delivery = .atMostOnce) throws {
        self.name = name
        client = PostgresClient(configuration: url.clientConfiguration())
        var settings = PostgresEventBridge.Configuration()
        settings.delivery = delivery
        let durable = if case .durable = delivery { true } else { false }
        bridge = try PostgresEventBridge(
            bus: bus, listenConfiguration: url.connectionConfiguration(applicationName: "demo-\(name)"),
            client: client, channel: durable ? "demo_billing" : "demo_events", configuration: settings)
        bridge.register(OrderShipped.self, as: "order.shipped.v1")
        bridge.register(CustomerNotified.self, as: "customer.notified.v1")
        bridge.register(InvoiceRequested.self, as: "invoice.requested.v1")
        group = ServiceGroup(services: [client, bridge], logger: Logger(label: "demo-\(name)"))
        let name = self.name
        _ = bus.on(BridgeStatus.self).next { status in say("[\(name)] bridge \(status)") }
        _ = bus.on(BridgeIssue.self).next { issue in say("[\(name)] bridge issue: \(issue)") }
    }
}

/// Prints a line at once (handlers run on bus queues, concurrently with the main flow).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Waits up to 10 s for `condition`.
func eventually(_ condition: @Sendable () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while !condition() {
        guard ContinuousClock.now < deadline else { throw CancellationError() }
        try await Task.sleep(for: .milliseconds(10))
    }
}

func runDemo() async throws {
    guard let url = DatabaseURL.fromEnvironment else {
        say("Set EVENTBUS_POSTGRES_URL, or run through Integrations/EventBusPostgres/scripts/with-postgres.sh")
        exit(1)
    }
    let orders = try Instance(name: "orders", url: url)
    let mail = try Instance(name: "mail", url: url)
    let listening = Recorder(BridgeStatus.self, on: orders.bus)
    let mailListening = Recorder(BridgeStatus.self, on: mail.bus)
    let shippedAtMail = Recorder(OrderShipped.self, on: mail.bus)
    let notifiedAtOrders = Recorder(CustomerNotified.self, on: orders.bus)

    // "mail" sends a message for every shipped order, and says so to the cluster.
    _ = mail.bus.on(OrderShipped.self).next { [bridge = mail.bridge] shipped in
        say("[mail] order \(shipped.orderID) shipped: sending an email")
        Task { try await bridge.publish(CustomerNotified(orderID: shipped.orderID, channel: "email")) }
    }
    _ = orders.bus.on(OrderShipped.self).next { shipped in say("[orders] order \(shipped.orderID) shipped (local)") }
    _ = orders.bus.on(CustomerNotified.self).ofType("email").next { notified in
        say("[orders] customer of order \(notified.orderID) notified by \(notified.channel)")
    }

    try await withThrowingTaskGroup(of: Void.self) { services in
        services.addTask { try await orders.group.run() }
        services.addTask { try await mail.group.run() }
        try await eventually { listening.events.count > 0 && mailListening.events.count > 0 }

        say("[orders] publish order 1 shipped")
        try await orders.bridge.publish(OrderShipped(orderID: 1))
        try await eventually { notifiedAtOrders.events.count == 1 }

        say("[orders] publish order 2 shipped inside a transaction (sent at COMMIT)")
        try await orders.client.withTransaction(logger: Logger(label: "demo")) { connection in
            try await orders.bridge.publish(OrderShipped(orderID: 2), in: connection)
            say("[orders] ...not delivered yet: the transaction is open")
        }
        try await eventually { notifiedAtOrders.events.count == 2 }

        say("[orders] publish order 3 in a transaction that rolls back: delivered nowhere")
        struct Rollback: Error {}
        _ = try? await orders.client.withTransaction(logger: Logger(label: "demo")) { connection in
            try await orders.bridge.publish(OrderShipped(orderID: 3), in: connection)
            throw Rollback()
        }

        say("[orders] publish an event too large for NOTIFY: refused before sending")
        do {
            try await orders.bridge.publish(CustomerNotified(orderID: 4, channel: String(repeating: "x", count: 9_000)))
        } catch {
            say("[orders] publish threw: \(error)")
        }

        try await orders.bridge.publish(OrderShipped(orderID: 5))
        try await eventually { shippedAtMail.events.count == 3 }
        say("[mail] received orders \(shippedAtMail.events.map(\.orderID)) (3 was rolled back)")

        await orders.group.triggerGracefulShutdown()
        await mail.group.triggerGracefulShutdown()
        try await services.waitForAll()
    }
    // The statuses arrive on the bus queues: let both ".stopped" lines print before the end.
    try await eventually {
        listening.events.last.map { "\($0)" } == "stopped" && mailListening.events.last.map { "\($0)" } == "stopped"
    }
    try await shareBillingWork(url: url)
    say("Done.")
}

/// Two instances of a billing service share its work as a consumer group (durable): each invoice is
/// handled once, by one of them, each customer's in order; when one stops, the other takes over.
func shareBillingWork(url: DatabaseURL) async throws {
    let group = PostgresEventBridge.Delivery.durable(.init(group: "billing", partitions: 4))
    let shop = try Instance(name: "shop", url: url, delivery: .durable(.init(consumer: "shop")))
    let workers = try ["billing-1", "billing-2"].map { try Instance(name: $0, url: url, delivery: group) }
    let handled = workers.map { Recorder(InvoiceRequested.self, on: $0.bus) }
    for worker in workers {
        _ = worker.bus.on(InvoiceRequested.self).next { [name = worker.name] request in
            say("[\(name)] invoice \(request.invoice) for \(request.customer)")
        }
    }
    let total: @Sendable () -> Int = { handled.map(\.events.count).reduce(0, +) }
    /// The shop requests `invoices`, for four customers in turn.
    func request(_ invoices: ClosedRange<Int>) async throws {
        for invoice in invoices {
            try await shop.bridge.publish(
                InvoiceRequested(customer: "customer-\((invoice - 1) % 4 + 1)", invoice: invoice))
        }
    }
    try await withThrowingTaskGroup(of: Void.self) { services in
        services.addTask { try await shop.group.run() }
        services.addTask { try await workers[0].group.run() }
        services.addTask { try await workers[1].group.run() }
        // The two workers even out their shares of the group's partitions within two heartbeats.
        try await Task.sleep(for: .milliseconds(2_500))
        say("[shop] request 8 invoices for 4 customers (durable; the billing group shares them)")
        try await request(1...8)
        try await eventually { total() == 8 }
        say("[billing] handled \(handled.map(\.events.count)) invoices: each once, shared between the two workers")
        await workers[0].group.triggerGracefulShutdown()
        say("[billing-1] stopped cleanly: its partitions go to billing-2")
        try await request(9...12)
        try await eventually { total() == 12 }
        say("[billing] all 12 invoices handled once: \(handled.map(\.events.count))")
        await shop.group.triggerGracefulShutdown()
        await workers[1].group.triggerGracefulShutdown()
        try await services.waitForAll()
    }
}

try await runDemo()
