/// How a ``DurableReader`` reads: batch size, lease duration, poll interval.
///
/// ```swift
/// var reading = DurableReading()
/// reading.leaseDuration = .seconds(6)
/// ```
public struct DurableReading: Sendable, Equatable {
    /// Events claimed, delivered and acknowledged at a time.
    public var batchSize = 500
    /// How long a lease lasts unrenewed: a killed owner's cursor is taken over within it plus a
    /// third of it. Renewed every third.
    public var leaseDuration: Duration = .seconds(3)
    /// How often an idle reader looks for events without a wake-up.
    public var pollInterval: Duration = .seconds(1)

    /// Reading settings (the defaults: 500 events a batch, a 3 s lease, a 1 s poll).
    ///
    /// ```swift
    /// let reading = DurableReading(batchSize: 100, leaseDuration: .seconds(6))
    /// ```
    public init(batchSize: Int = 500, leaseDuration: Duration = .seconds(3), pollInterval: Duration = .seconds(1)) {
        self.batchSize = batchSize
        self.leaseDuration = leaseDuration
        self.pollInterval = pollInterval
    }
}
