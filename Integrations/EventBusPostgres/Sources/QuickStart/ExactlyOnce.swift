import EventBus
import EventBusPostgres
import Foundation
import PostgresNIO

struct OrderPlaced: Event, Codable {
    let orderID: UUID
    let cents: Int
}

/// Durable delivery (required), and how a failing handler is tried before its event becomes a
/// dead letter.
func invoicingSettings() -> PostgresEventBridge.Configuration {
    var durable = PostgresEventBridge.Durable(consumer: "invoicing")
    durable.processing.maximumAttempts = 5  // then a dead letter, reported
    durable.processing.maximumTransactionDuration = .milliseconds(500)  // how long others wait at most
    var settings = PostgresEventBridge.Configuration()
    settings.delivery = .durable(durable)
    return settings
}

/// Each order is invoiced exactly once: the INSERT commits in the transaction that moves the
/// consumer's cursor past the event, or not at all. Register before `run()`.
func invoiceOrders(cluster: PostgresEventBridge) throws {
    cluster.register(OrderPlaced.self, as: "order.placed.v1")
    try cluster.process(OrderPlaced.self) { order, connection in
        try await connection.query(
            "INSERT INTO invoices (order_id, cents) VALUES (\(order.orderID), \(order.cents))", logger: logger)
    }
}

/// Once the cause of the failures is fixed: what failed, and try it again.
func retryFailedInvoices(cluster: PostgresEventBridge) async throws {
    for letter in try await cluster.deadLetters(consumer: "invoicing", limit: 50) {
        logger.warning("letter \(letter.id): \(letter.attempts) failures, last: \(letter.reason)")
    }
    let requeued = try await cluster.requeueDeadLetters(of: "invoicing")
    logger.info("\(requeued) events requeued")
}
