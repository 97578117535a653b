public import Foundation

/// A ``DurableStore`` that also keeps events to publish at a time: rows a firer moves into the
/// store's events when they are due, each exactly once however many firers run.
///
/// A scheduled event is kept encoded (a ``RemoteBridge/PendingEvent``, its MAC bound to its channel
/// and id), never as an envelope: the firing bridge seals it (origin, sequence, clock, MAC) in the
/// same atomic write that appends it and marks it fired, so a firer that dies before that write
/// fires nothing and leaves the event to the next. A fired or cancelled event is marked, not
/// deleted, so that a cancel can say who won (``ScheduledEventCancellation``). ``DurableScheduler``
/// holds the logic above these calls (encoding, the firing loop); `EventBusPostgres` and
/// ``InMemoryDurableStore`` implement them.
///
/// Every method may be called from any thread, concurrently.
///
/// ```swift
/// let scheduler = DurableScheduler(store: store, bridge: bridge, channel: "orders")
/// let reminder = try await scheduler.publish(PaymentDue(orderID: 7), after: .seconds(3_600))
/// ```
public protocol DurableScheduleStore: DurableStore {
    /// Stores `event` under `id`, due as `due` says (by the store's clock).
    func schedule(_ event: RemoteBridge.PendingEvent, id: UUID, due: DurableDue) async throws

    /// Marks the scheduled event `id` cancelled unless it fired, was cancelled or was refused
    /// first; says which.
    func cancelScheduled(_ id: UUID) async throws -> ScheduledEventCancellation

    /// One firing pass: takes up to `limit` events due by the store's clock plus `lookingAhead`
    /// that no other firer holds, in due order, seals each with `seal`, appends the envelopes (one
    /// atomic write, with a wake-up) and marks them fired — or refused, with the reason `seal`
    /// threw; returns how many events it took.
    func fireDue(
        lookingAhead: Duration, limit: Int, seal: @escaping @Sendable (DurableDueEvent) throws -> String
    ) async throws -> Int
}
