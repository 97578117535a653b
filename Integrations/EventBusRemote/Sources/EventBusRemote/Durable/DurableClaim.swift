/// A claimed batch (``DurableCursor/claim(after:limit:epoch:)``): its last position, how many
/// events it holds, and how many events retention deleted before the consumer read them (not
/// reported yet).
public struct DurableClaim<Position: Comparable & Sendable>: Sendable {
    /// The batch's last position (a partition's: possibly another partition's event, the horizon).
    public var last: Position
    /// How many of the cursor's events the batch holds.
    public var count: Int
    /// The cursor's expired count when it was claimed: events retention deleted after the cursor,
    /// which the next acknowledgement returns (and resets). ``DurableReader`` reports them before
    /// it delivers the batch, so that the gaps they leave in their origins' numbers read as
    /// `expired`, not as `missed`.
    public var expired: Int

    /// A claim ending at `last`, holding `count` of the cursor's events, `expired` events deleted
    /// unread before it.
    ///
    /// ```swift
    /// let claim = DurableClaim(last: Int64(42), count: 10)
    /// ```
    public init(last: Position, count: Int, expired: Int = 0) {
        self.last = last
        self.count = count
        self.expired = expired
    }
}
