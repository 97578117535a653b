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
