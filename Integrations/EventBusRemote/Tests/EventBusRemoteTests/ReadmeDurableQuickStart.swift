import EventBus
import EventBusRemote
import Foundation

struct OrderPlaced: Event, Codable { let orderID: Int }

/// A shop and a mailer in one process; the mailer is a durable consumer: it gets every order,
/// those placed while it is stopped too. Returns the orders it mailed.
func durableQuickStart() async throws -> [Int] {
    let store = InMemoryDurableStore()  // the channel's events and its consumers' cursors
    let shop = RemoteBridge(
        bus: EventBus(), transport: DurableTransport(store: store, consumer: DurableConsumerID("shop")))
    let mailer = RemoteBridge(
        bus: EventBus(), transport: DurableTransport(store: store, consumer: DurableConsumerID("mailer")))
    for bridge in [shop, mailer] { bridge.register(OrderPlaced.self, as: "order.placed") }
    let (mailed, mail) = AsyncStream.makeStream(of: Int.self)
    let mails = mailer.bus.on(OrderPlaced.self).next { mail.yield($0.orderID) }
    defer { mails.dispose() }
    // A consumer gets what is published after its cursor exists: its first run creates it (or open it first).
    _ = try await store.cursor(DurableConsumerID("mailer"), owner: UUID()).open()

    var receiving = Task { try await mailer.run() }
    try await shop.publish(OrderPlaced(orderID: 1))
    var orders = mailed.makeAsyncIterator()
    let first = await orders.next()  // 1
    receiving.cancel()  // the mailer stops (its batch acknowledged)...
    _ = await receiving.result
    try await shop.publish(OrderPlaced(orderID: 2))  // ...while the shop goes on
    receiving = Task { try await mailer.run() }  // run again: it gets order 2, and nothing twice
    let second = await orders.next()  // 2
    receiving.cancel()
    return [first, second].compactMap { $0 }
}
