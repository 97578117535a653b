extension RemoteInbox {
    /// Records a durable consumer's lag, as the transport just measured it: kept as that
    /// consumer's latest (``RemoteBridge/lag``) and recorded in its gauges (`consumer_lag`,
    /// `consumer_lag_seconds`).
    ///
    /// Runs on the caller's thread: the gauges of a consumer are made by the metrics factory the
    /// first time (outside the inbox's locks), then each call is two gauge records and one
    /// dictionary write under a lock. Never fails; a measure replaces the previous one of the same
    /// ``ConsumerLag/consumer``.
    ///
    /// ```swift
    /// let (unread, oldest) = try await store.countAfterCursor(of: "billing")
    /// inbox.lag(ConsumerLag(consumer: "billing", unread: unread, oldestUnreadAge: oldest))
    /// ```
    public func lag(_ lag: ConsumerLag) {
        core.metrics.lag.record(lag)
    }
}

extension RemoteInbox {
    /// Records the lag of the partitions of consumer group `group` that this bridge reads now, as
    /// the transport just measured them (each as ``lag(_:)`` does), and forgets the group's other
    /// partitions: those it gave up since leave ``RemoteBridge/lag``, and their gauges go to 0.
    ///
    /// Runs on the caller's thread, as ``lag(_:)``; O(partitions measured + consumers kept).
    ///
    /// ```swift
    /// inbox.lag(heldPartitions.map { measure($0) }, ofGroup: "billing")
    /// ```
    public func lag(_ lags: [ConsumerLag], ofGroup group: String) {
        core.metrics.lag.record(lags, ofGroup: group)
    }

    /// Reports ``BridgeIssue/cursorReset(consumer:to:again:skipped:)``, on the bus queue before the
    /// events delivered next: a durable transport took over consumer `consumer` and found that an
    /// operator moved its cursor to `point` since it last acknowledged. The inbox also forgets which
    /// (origin, sequence) pairs it delivered, so that the events it reads next, repeated on purpose,
    /// are not dropped as duplicates, and those it skips are not reported as `missed` (the
    /// announcement counts them). Events this bridge published itself are not dispatched again: it
    /// dispatched them locally when it published them.
    ///
    /// ```swift
    /// if let reset = stored.pendingReset { inbox.cursorReset(consumer: name, to: reset.point, again: 12, skipped: 0) }
    /// ```
    public func cursorReset(consumer: String, to point: String, again: Int, skipped: Int) {
        forgetDelivered()
        core.report(.cursorReset(consumer: consumer, to: point, again: again, skipped: skipped))
    }

    /// Reports ``BridgeIssue/consumerRemoved(consumer:)``, on the bus queue before the events
    /// delivered next: a durable transport found that consumer `consumer`'s cursor was deleted
    /// while it read for it, and started it again as a new consumer.
    ///
    /// ```swift
    /// if cursorWasRecreated { inbox.consumerRemoved(name) }
    /// ```
    public func consumerRemoved(_ consumer: String) {
        core.report(.consumerRemoved(consumer: consumer))
    }
}
