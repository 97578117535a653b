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

/// When a scheduled event is due.
///
/// ```swift
/// try await store.schedule(pending, id: id, due: .after(.seconds(60)))
/// ```
public enum DurableDue: Sendable, Equatable {
    /// This long after it is stored, by the store's clock.
    case after(Duration)
    /// At this time (compared with the store's clock).
    case at(Date)
}

/// A due event, held by the firing pass (``DurableScheduleStore/fireDue(lookingAhead:limit:seal:)``).
public struct DurableDueEvent: Sendable {
    /// The scheduled event's id.
    public let id: UUID
    /// The event, encoded when it was scheduled.
    public let pending: RemoteBridge.PendingEvent

    public init(id: UUID, pending: RemoteBridge.PendingEvent) {
        self.id = id
        self.pending = pending
    }
}

/// What a cancel of a scheduled event found: whether it won against the firer.
///
/// ```swift
/// switch try await scheduler.cancel(reminder) {
/// case .cancelled: print("will never be delivered")
/// case .alreadyFired: print("delivered, or being delivered: the firer won")
/// default: break
/// }
/// ```
public enum ScheduledEventCancellation: Sendable, Equatable {
    /// The event was pending and is now cancelled: it is never fired or delivered.
    case cancelled
    /// A firer won: the event was appended to the store (its write committed), and is delivered to
    /// every consumer as any durable event.
    case alreadyFired
    /// An earlier cancel won.
    case alreadyCancelled
    /// The firer refused the event (its MAC did not verify under the firer's key, or its envelope
    /// would be too large): it never fired. `reason` says why.
    case refused(reason: String)
    /// No such event in this store: never scheduled here, or fired or cancelled longer ago than
    /// the store keeps them.
    case unknown
}
