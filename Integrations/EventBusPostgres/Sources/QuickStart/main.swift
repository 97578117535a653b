import EventBus
import EventBusPostgres
import Foundation
import PostgresNIO
import ServiceLifecycle

struct OrderShipped: Event, Codable { let orderID: UUID }

let client = PostgresClient(
    configuration: .init(
        host: "db", username: "app", password: secret, database: "app", tls: .disable))
// The dedicated listening connection: straight to the server, never through PgBouncer in
// transaction mode.
let listen = PostgresConnection.Configuration(
    host: "db", username: "app", password: secret, database: "app", tls: .disable)
var settings = PostgresEventBridge.Configuration()
settings.authenticationKey = clusterKey  // 32 random bytes shared by the instances
let cluster = try PostgresEventBridge(
    bus: .shared, listenConfiguration: listen, client: client, channel: "app_events",
    configuration: settings)
cluster.register(OrderShipped.self, as: "order.shipped.v1")  // explicit wire name; only these decode

let subscriptions = DisposeBag()  // they end with the bag
EventBus.shared.on(OrderShipped.self).next { shipped in  // from this instance and all the others
    print("shipped", shipped.orderID)
}.disposed(by: subscriptions)
EventBus.shared.on(BridgeStatus.self).next { status in  // .listening / .interrupted / .resumed(gap:)
    logger.info("cluster events: \(status)")
}.disposed(by: subscriptions)
EventBus.shared.on(BridgeIssue.self).next { issue in  // every refused, dropped or missed event
    logger.warning("cluster events: \(issue)")
}.disposed(by: subscriptions)

// Run the client and the bridge (both are swift-service-lifecycle services).
let services = ServiceGroup(services: [client, cluster], gracefulShutdownSignals: [.sigterm], logger: logger)
Task { try await services.run() }

try await cluster.publish(OrderShipped(orderID: id))  // local dispatch now + NOTIFY
try await client.withTransaction(logger: logger) { connection in
    try await connection.query("UPDATE orders SET shipped = true WHERE id = \(id)", logger: logger)
    try await cluster.publish(OrderShipped(orderID: id), in: connection)  // sent at COMMIT
}
