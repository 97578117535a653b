public import Foundation

/// How far a durable consumer is behind its channel, as its running bridge last measured it: the
/// events after its cursor that it has not read, and the age of the oldest of them.
///
/// A durable transport measures the lag of the consumers it holds, every so often, and hands it to
/// ``RemoteInbox/lag(_:)``; the bridge keeps the latest measure per consumer (read it with
/// ``RemoteBridge/lag`` without asking the store) and records it as two swift-metrics gauges,
/// `consumer_lag` (``unread``) and `consumer_lag_seconds` (``oldestUnreadAge``; see
/// ``RemoteBridge/Configuration/metricsFactory``). A consumer of a group (one of its partitions)
/// has its own measure, named by ``group`` and ``partition``. A plain value: reading it runs
/// nothing and takes no lock of the bridge.
///
/// ```swift
/// for lag in cluster.lag where lag.unread > 10_000 {
///     logger.warning("\(lag.consumer) is \(lag.unread) events behind, oldest \(lag.oldestUnreadAge ?? .zero)")
/// }
/// ```
public struct ConsumerLag: Sendable, Hashable, CustomStringConvertible {
    /// The consumer's name in the store (for a group's partition, the partition's own name, such
    /// as `billing#3`).
    public var consumer: String

    /// The consumer group the consumer is a partition of; `nil` for a consumer of its own.
    public var group: String?

    /// Which partition of ``group`` this consumer is, from 0; `nil` for a consumer of its own.
    public var partition: Int?

    /// How many committed events of the channel are after the consumer's cursor: not yet read,
    /// or read and not yet acknowledged. A lower bound when ``unreadIsExact`` is `false` (the
    /// transport stopped counting there, to bound the cost of measuring).
    public var unread: Int

    /// Whether ``unread`` is the exact count (`true`) or where counting stopped.
    public var unreadIsExact: Bool

    /// How long ago the oldest of the unread events was stored, by the store's clock; `nil` when
    /// there is none (the consumer is caught up).
    public var oldestUnreadAge: Duration?

    /// When the transport measured this, by this process's clock.
    public var measuredAt: Date

    /// A measure, as a transport makes it for ``RemoteInbox/lag(_:)``.
    ///
    /// ```swift
    /// inbox.lag(ConsumerLag(consumer: "billing", unread: 12, oldestUnreadAge: .seconds(3)))
    /// ```
    public init(
        consumer: String, group: String? = nil, partition: Int? = nil, unread: Int, unreadIsExact: Bool = true,
        oldestUnreadAge: Duration?, measuredAt: Date = Date()
    ) {
        self.consumer = consumer
        self.group = group
        self.partition = partition
        self.unread = unread
        self.unreadIsExact = unreadIsExact
        self.oldestUnreadAge = oldestUnreadAge
        self.measuredAt = measuredAt
    }

    /// One line for logs: `billing: 12 unread, oldest 3.0 seconds`.
    ///
    /// ```swift
    /// for lag in cluster.lag { logger.info("\(lag)") }
    /// ```
    public var description: String {
        let count = unreadIsExact ? "\(unread)" : "at least \(unread)"
        let oldest = oldestUnreadAge.map { ", oldest \($0)" } ?? ""
        return "\(consumer): \(count) unread\(oldest)"
    }
}
