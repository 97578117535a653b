/// Where a reader stands between batches.
public struct DurableProgress<Position: Comparable & Sendable>: Sendable {
    /// The cursor: the last event acknowledged.
    public var position: Position
    /// The end of a previous owner's unacknowledged batch, while the cursor is before it.
    public var redeliverThrough: Position?
    /// The last event announced as redelivered.
    public var announced: Position?
    /// The event held last (reported once).
    public var heldAt: Position?

    /// A reader at `position`, with a predecessor's claim to announce through `redeliverThrough`.
    ///
    /// ```swift
    /// let progress = DurableProgress(position: Int64(0))
    /// ```
    public init(position: Position, redeliverThrough: Position? = nil, announced: Position? = nil) {
        self.position = position
        self.redeliverThrough = redeliverThrough
        self.announced = announced
    }
}
