public import Foundation

extension PostgresEventBridge {
    /// What ``PostgresEventBridge/removeConsumer(_:force:)`` did.
    ///
    /// ```swift
    /// switch try await cluster.removeConsumer("old-worker") {
    /// case .removed: logger.info("removed: retention no longer waits for it")
    /// case .leased(let owner, _): logger.warning("\(owner) still reads for it: stop it first")
    /// case .removedWhileLeased, .unknown: break
    /// }
    /// ```
    public enum ConsumerRemoval: Sendable, Hashable {
        /// The cursor was deleted; no bridge held its lease. Retention no longer waits for it. A
        /// bridge of that name started later begins as a new consumer, after the last committed
        /// event.
        case removed

        /// The cursor was deleted although bridge `owner` held its lease (until `until`), because
        /// the removal was forced. That bridge finds out at its next claim, acknowledgement or lease
        /// renewal (within a third of ``Durable/leaseDuration``), makes the cursor again after the
        /// last committed event, and goes on as a new consumer, announcing it with
        /// `BridgeIssue.consumerRemoved(consumer:)`: the events it had not read are not delivered
        /// to it, and a batch it was delivering may not be acknowledged. (A group's members: see
        /// ``PostgresEventBridge/removeConsumerGroup(_:force:)``.)
        case removedWhileLeased(by: UUID, until: Date)

        /// Refused, nothing changed: bridge `owner` holds the consumer's lease until `until` (it
        /// runs). Stop it first, or remove with `force: true`.
        case leased(by: UUID, until: Date)

        /// The channel has no consumer of that name; nothing changed.
        case unknown
    }
}
