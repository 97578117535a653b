import EventBus
import EventBusPostgres
import Foundation

/// Version 1 of "invoice.paid": the shape the instances not yet upgraded publish and read.
struct InvoicePaidV1: Codable { let invoiceID: UUID }

/// Version 2, what subscribers see: the amount was added.
struct InvoicePaid: Event, Codable {
    let invoiceID: UUID
    let cents: Int?
}

/// Step 1 of the deploy protocol reads versions 1 and 2 and publishes 1; step 2, deployed once
/// every instance runs step 1, publishes 2.
func registerInvoicePaid(on cluster: PostgresEventBridge, stepTwo: Bool) {
    cluster.register(
        InvoicePaid.self, as: "invoice.paid", version: 2,
        upcasting: [
            .from(
                InvoicePaidV1.self, version: 1,
                upcast: { InvoicePaid(invoiceID: $0.invoiceID, cents: nil) },
                downcast: { InvoicePaidV1(invoiceID: $0.invoiceID) })
        ],
        publishing: stepTwo ? 2 : 1)
}
