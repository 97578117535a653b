extension RemoteBridge {
    /// The latest lag of each durable consumer this bridge's transport runs, as it last measured
    /// it (``RemoteInbox/lag(_:)``), sorted by consumer name; empty until a first measure (and
    /// always, for a transport that keeps no cursor).
    ///
    /// Reads what is in memory: no query, O(consumers) under a lock that no user code runs under.
    /// A measure is kept after the bridge stops (see ``ConsumerLag/measuredAt``).
    ///
    /// ```swift
    /// if let lag = cluster.lag.first, lag.unread > 1_000 {
    ///     logger.warning("behind: \(lag)")
    /// }
    /// ```
    public var lag: [ConsumerLag] {
        core.metrics.lag.all
    }
}
