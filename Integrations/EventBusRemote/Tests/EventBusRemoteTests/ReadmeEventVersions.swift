import EventBus
import EventBusRemote
import Foundation

struct OrderShippedV1: Codable { let orderID: UUID }  // the shape instances still publish
struct OrderShipped: Event, Codable {  // today's shape: what subscribers see
    let orderID: UUID
    let carrier: String?
}

/// Step 1 of the deploy protocol: reads versions 1 and 2, publishes 1. Step 2 leaves `publishing` out.
func registerOrderShipped(on cluster: RemoteBridge) {
    cluster.register(
        OrderShipped.self, as: "order.shipped", version: 2,
        upcasting: [
            .from(
                OrderShippedV1.self, version: 1,
                upcast: { OrderShipped(orderID: $0.orderID, carrier: nil) },
                downcast: { OrderShippedV1(orderID: $0.orderID) })
        ],
        publishing: 1)
}
