public import Foundation

/// An event a durable consumer's handler failed on, set aside (``DurableDeadLetterStore``):
/// listed by ``DurableDeadLetterStore/deadLetters(of:after:limit:)`` and requeued by
/// ``DurableDeadLetterStore/requeueDeadLetters(_:of:)``.
///
/// ```swift
/// for letter in try await store.deadLetters(of: nil, after: 0, limit: 100) {
///     print("\(letter.consumer) failed \(letter.attempts)× on \(letter.wireName): \(letter.reason)")
/// }
/// ```
public struct DurableDeadLetter: Sendable, Identifiable, Equatable {
    /// The dead letter's id, what a requeue takes; ids only grow.
    public let id: Int64
    /// The consumer whose handler failed; in a consumer group, the partition's cursor
    /// (`name#index`), whose lease holder tries it again when it is requeued.
    public let consumer: String
    /// The stored event's id (PostgreSQL: its outbox row's, which retention may have deleted since;
    /// ``InMemoryDurableStore``: its position).
    public let eventID: Int64
    /// The event's wire name, as its envelope stated it.
    public let wireName: String
    /// The event's envelope, as it was stored (a requeue decodes it again).
    public let envelope: String
    /// How many runs of the handler failed, over every time it was requeued.
    public let attempts: Int
    /// The last failure: the handler's error, or why it was not run again.
    public let reason: String
    /// When it was last set aside (the store's clock).
    public let deadAt: Date
    /// When it was requeued, while its consumer has not tried it again; `nil` otherwise.
    public let requeuedAt: Date?

    /// A dead letter as a store lists it.
    ///
    /// ```swift
    /// let letter = DurableDeadLetter(
    ///     id: 1, consumer: "billing", eventID: 42, wireName: "order.placed.v1", envelope: envelope,
    ///     attempts: 3, reason: "card declined", deadAt: Date(), requeuedAt: nil)
    /// ```
    public init(
        id: Int64, consumer: String, eventID: Int64, wireName: String, envelope: String, attempts: Int, reason: String,
        deadAt: Date, requeuedAt: Date?
    ) {
        self.id = id
        self.consumer = consumer
        self.eventID = eventID
        self.wireName = wireName
        self.envelope = envelope
        self.attempts = attempts
        self.reason = reason
        self.deadAt = deadAt
        self.requeuedAt = requeuedAt
    }
}
