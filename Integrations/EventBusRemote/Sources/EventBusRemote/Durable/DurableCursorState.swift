/// Where a cursor stands (``DurableCursor/open()``).
public struct DurableCursorState<Position: Comparable & Sendable>: Sendable {
    /// The last event acknowledged.
    public var position: Position
    /// The end of the last batch claimed, if beyond ``position``: events a previous owner may have
    /// delivered without acknowledging them.
    public var claimed: Position?
    /// Events retention deleted before the consumer read them, not yet reported.
    public var expired: Int
    /// Through where events read again were announced otherwise (a cursor reset's `again`), if any.
    public var announced: Position?

    /// A cursor at `position`, with its claim, unreported expired count and reset bound.
    ///
    /// ```swift
    /// let state = DurableCursorState(position: Int64(7), claimed: 12)
    /// ```
    public init(position: Position, claimed: Position? = nil, expired: Int = 0, announced: Position? = nil) {
        self.position = position
        self.claimed = claimed
        self.expired = expired
        self.announced = announced
    }
}
