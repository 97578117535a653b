public import EventBusRemote
public import Foundation

extension PostgresEventBridge {
    /// One durable consumer of the channel, as ``PostgresEventBridge/consumers()`` found it: its
    /// lag, its lease, its cursor. A consumer group's partition is a consumer of its own (its
    /// ``name`` the partition's, such as `billing#3`), with ``group`` and ``partition`` set, so a
    /// group's partitions list next to each other.
    ///
    /// ```swift
    /// for consumer in try await cluster.consumers() {
    ///     print(consumer.name, consumer.unread, consumer.oldestUnreadAge ?? .zero, consumer.lease.isHeld)
    /// }
    /// ```
    public struct ConsumerDescription: Sendable, Hashable {
        /// The consumer's name (its cursor row's `consumer`): ``Durable/consumer``, or a group
        /// partition's name.
        public let name: String

        /// The consumer group this consumer is a partition of; `nil` for a consumer of its own
        /// (and always, on a database without consumer groups' columns).
        public let group: String?

        /// Which partition of ``group`` it is, from 0; `nil` for a consumer of its own.
        public let partition: Int?

        /// How many partitions ``group`` has; `nil` for a consumer of its own.
        public let partitions: Int?

        /// How many committed events of the channel are after its cursor: not read yet, or read
        /// and not acknowledged yet (its claimed batch). Exact, counted when listed.
        public let unread: Int

        /// When the oldest of the ``unread`` events was stored (`created_at`, the database's
        /// clock); `nil` when the consumer is caught up.
        public let oldestUnreadAt: Date?

        /// How long ago, by the database's clock, the oldest unread event was stored; `nil` when the
        /// consumer is caught up.
        public let oldestUnreadAge: Duration?

        /// Which bridge reads for it, if any.
        public let lease: ConsumerLease

        /// When its cursor last moved by an acknowledgement (or when it was made, if it never did),
        /// by the database's clock. A reset does not change it.
        public let lastAcknowledgedAt: Date

        /// The outbox row id of its cursor: it has acknowledged everything up to this row, in
        /// delivery order.
        public let cursorRowID: Int64

        /// The last row of the batch it claimed and has not acknowledged (being delivered now, or
        /// left by a process that died mid-batch: delivered again, announced), if any.
        public let claimedThroughRowID: Int64?

        /// Events retention deleted after its cursor that it has not reported yet
        /// (`BridgeIssue.expired(consumer:count:)` at its next acknowledgement or start).
        public let unreportedExpired: Int

        /// A reset of its cursor that it has not acknowledged anything since: the point in words,
        /// which its bridge announces (`BridgeIssue.cursorReset(consumer:to:again:skipped:)`).
        public let pendingReset: String?

        /// The lag part, in the shape a running bridge reports its own (``PostgresEventBridge/lag``).
        ///
        /// ```swift
        /// let lags = try await cluster.consumers().map(\.lag)
        /// ```
        public var lag: ConsumerLag {
            ConsumerLag(
                consumer: name, group: group, partition: partition, unread: unread, oldestUnreadAge: oldestUnreadAge)
        }
    }
}
