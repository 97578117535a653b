import EventBus
import EventBusPostgres
import Foundation
import PostgresNIO

struct InvoiceRequested: Event, Codable {
    let customerID: String
    let amount: Int
    var eventType: String { customerID }  // the ordering key: one customer's events in order
}

/// Every instance of the billing service runs this: the instances share the channel's events,
/// each event handled by one of them, each customer's events in order by one at a time.
func billingWorker(listen: PostgresConnection.Configuration, client: PostgresClient) throws -> PostgresEventBridge {
    var settings = PostgresEventBridge.Configuration()
    settings.delivery = .durable(.init(group: "billing", partitions: 16))
    let cluster = try PostgresEventBridge(
        bus: .shared, listenConfiguration: listen, client: client, channel: "app_events", configuration: settings)
    cluster.register(InvoiceRequested.self, as: "invoice.requested.v1")
    // Subscribed for as long as the bridge lives.
    EventBus.shared.on(InvoiceRequested.self).freeWith(cluster).next { _, request in
        logger.info("invoicing \(request.customerID): \(request.amount)")
    }
    return cluster  // run it in your ServiceGroup, beside the client
}
