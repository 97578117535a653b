extension RemoteInbox {
    /// What ``RemoteInbox/deliverAndWait(_:)`` did with a batch of stored payloads: how many, from
    /// the first, it handled, and why it stopped before the rest.
    ///
    /// A durable transport acknowledges the first ``handled`` payloads and no more: a held payload
    /// (one this instance cannot decode, which an upgraded instance reads) is never acknowledged.
    ///
    /// ```swift
    /// let batch = await inbox.deliverAndWait(rows.map(\.payload))
    /// if batch.handled > 0 { try await acknowledge(rows[batch.handled - 1]) }
    /// if let reason = batch.held { inbox.held(consumer: name, reason: reason) }
    /// ```
    public struct StoredBatch: Equatable, Sendable {
        /// How many payloads, from the first, were handled: dispatched with their synchronous
        /// subscribers returned, or refused for good and reported. Safe to acknowledge.
        public let handled: Int

        /// Why the payload at index ``handled`` was held (not decoded, not recorded, nothing after
        /// it delivered); `nil` when every payload was handled.
        public let held: String?

        /// A batch result, as ``RemoteInbox/deliverAndWait(_:)`` makes it (public for a transport's tests).
        ///
        /// ```swift
        /// #expect(batch == RemoteInbox.StoredBatch(handled: 10, held: nil))
        /// ```
        public init(handled: Int, held: String?) {
            self.handled = handled
            self.held = held
        }
    }
}
