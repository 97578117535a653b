public import Foundation

/// A due event, held by the firing pass (``DurableScheduleStore/fireDue(lookingAhead:limit:seal:)``).
public struct DurableDueEvent: Sendable {
    /// The scheduled event's id.
    public let id: UUID
    /// The event, encoded when it was scheduled.
    public let pending: RemoteBridge.PendingEvent

    /// The due event `id`, encoded as `pending`.
    ///
    /// ```swift
    /// let due = DurableDueEvent(id: id, pending: pending)
    /// ```
    public init(id: UUID, pending: RemoteBridge.PendingEvent) {
        self.id = id
        self.pending = pending
    }
}
