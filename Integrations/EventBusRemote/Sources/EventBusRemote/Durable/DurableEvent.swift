/// A stored event: its position and its envelope.
public struct DurableEvent<Position: Comparable & Sendable>: Sendable {
    /// Where the event stands in the store's order.
    public var position: Position
    /// The envelope, as the publisher sealed it.
    public var envelope: String

    /// The event at `position` whose envelope is `envelope`.
    ///
    /// ```swift
    /// let event = DurableEvent(position: Int64(1), envelope: envelope)
    /// ```
    public init(position: Position, envelope: String) {
        self.position = position
        self.envelope = envelope
    }
}
