/// A claimed batch (``DurableCursor/claim(after:limit:epoch:)``): its last position and how many
/// events it holds.
public struct DurableClaim<Position: Comparable & Sendable>: Sendable {
    /// The batch's last position (a partition's: possibly another partition's event, the horizon).
    public var last: Position
    /// How many of the cursor's events the batch holds.
    public var count: Int

    /// A claim ending at `last`, holding `count` of the cursor's events.
    ///
    /// ```swift
    /// let claim = DurableClaim(last: Int64(42), count: 10)
    /// ```
    public init(last: Position, count: Int) {
        self.last = last
        self.count = count
    }
}
