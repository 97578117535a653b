import EventBus
import EventBusPostgres
import Foundation
import PostgresNIO

struct PaymentDue: Event, Codable { let orderID: UUID }

/// Scheduled events need durable delivery, on every instance of the channel; each running durable
/// bridge fires them (each event once, whichever instances run or die).
func schedulingSettings() -> PostgresEventBridge.Configuration {
    var durable = PostgresEventBridge.Durable(consumer: "billing-worker-1")
    durable.scheduling.pollInterval = .milliseconds(500)  // lateness ≤ this + one batch
    var settings = PostgresEventBridge.Configuration()
    settings.delivery = .durable(durable)
    return settings
}

func remindLater(cluster: PostgresEventBridge, client: PostgresClient, orderID: UUID) async throws {
    cluster.register(PaymentDue.self, as: "payment.due.v1")
    // In 24 hours by the database's clock; the handle is what cancel takes (store its uuid).
    let reminder = try await cluster.publish(PaymentDue(orderID: orderID), after: .seconds(86_400))
    // Or at a date, inside your transaction: a ROLLBACK schedules nothing.
    try await client.withTransaction(logger: logger) { connection in
        try await connection.query("UPDATE orders SET reminded = true WHERE id = \(orderID)", logger: logger)
        try await cluster.publish(PaymentDue(orderID: orderID), at: Date() + 3_600, in: connection)
    }
    switch try await cluster.cancel(reminder) {
    case .cancelled: logger.info("cancelled: no consumer will get it")
    case .alreadyFired: logger.info("too late: fired, every consumer gets it")
    case .alreadyCancelled, .refused, .unknown: break
    }
}
