public import EventBus
internal import Foundation

extension RemoteBridge {
    /// How a bridge reads an older version of an event (the payload's older shape, turned into
    /// today's type) and, optionally, writes it (today's type turned into the older shape): for
    /// ``RemoteBridge/register(_:as:version:upcasting:publishing:)``.
    ///
    /// The upcast runs on the thread that received the envelope (a transport's task), outside the
    /// bridge's locks, before the event is dispatched; the downcast runs in
    /// ``RemoteBridge/publish(_:)``, on the caller's thread. Keep both pure and fast. A throwing
    /// upcast is an undecodable payload (at most once: reported and skipped; durable: the row is
    /// not acknowledged).
    ///
    /// ```swift
    /// struct OrderShippedV1: Codable { let orderID: UUID }
    /// struct OrderShipped: Event, Codable { let orderID: UUID; let carrier: String? }
    ///
    /// let fromV1 = RemoteBridge.Upcaster<OrderShipped>.from(
    ///     OrderShippedV1.self, version: 1,
    ///     upcast: { OrderShipped(orderID: $0.orderID, carrier: nil) },
    ///     downcast: { OrderShippedV1(orderID: $0.orderID) })
    /// ```
    public struct Upcaster<E: Event & Codable>: Sendable {
        /// The older version it reads.
        public let version: Int
        let decode: @Sendable (Data) throws -> E
        let downcast: (@Sendable (E) throws -> Data)?

        /// Reads version `version` of the wire name as `Old`, the shape that version had, and turns
        /// it into `E` with `upcast`; with `downcast`, the bridge can also publish that version
        /// (step 1 of a rolling upgrade: see ``RemoteBridge/register(_:as:version:upcasting:publishing:)``).
        ///
        /// ```swift
        /// .from(OrderShippedV1.self, version: 1, upcast: { OrderShipped(orderID: $0.orderID, carrier: nil) })
        /// ```
        public static func from<Old: Codable & SendableMetatype>(
            _ old: Old.Type, version: Int, upcast: @escaping @Sendable (Old) throws -> E,
            downcast: (@Sendable (E) throws -> Old)? = nil
        ) -> Upcaster {
            let decode: @Sendable (Data) throws -> E = { data in
                try upcast(JSONDecoder().decode(Envelope.Payload<Old>.self, from: data).p)
            }
            var encode: (@Sendable (E) throws -> Data)?
            if let downcast {
                encode = { event in try Envelope.payloadEncoder().encode(downcast(event)) }
            }
            return Upcaster(version: version, decode: decode, downcast: encode)
        }
    }
}
