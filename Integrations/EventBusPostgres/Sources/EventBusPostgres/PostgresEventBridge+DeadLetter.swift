public import Foundation

extension PostgresEventBridge {
    /// An event a durable consumer's transactional handler failed on
    /// (``PostgresEventBridge/process(_:_:)``), moved out of the consumer's way: a row of
    /// `eventbus_dead_letters`, listed by ``PostgresEventBridge/deadLetters(consumer:after:limit:)``
    /// and requeued by ``PostgresEventBridge/requeue(_:)``.
    ///
    /// ```swift
    /// for letter in try await cluster.deadLetters() {
    ///     logger.error("\(letter.consumer) failed \(letter.attempts)× on \(letter.wireName): \(letter.reason)")
    /// }
    /// ```
    public struct DeadLetter: Sendable, Identifiable {
        /// The dead letter's id, what ``PostgresEventBridge/requeue(_:)`` takes; ids only grow.
        public let id: Int64
        /// The consumer whose handler failed; in a consumer group, the partition's cursor
        /// (`name#index`), whose lease holder tries it again when it is requeued.
        public let consumer: String
        /// The id of the event's outbox row (which retention may have deleted since).
        public let outboxID: Int64
        /// The event's wire name, as its envelope stated it.
        public let wireName: String
        /// The event's envelope, as it was in the outbox (requeuing decodes it again).
        public let payload: String
        /// How many runs of the handler failed, over every time it was requeued.
        public let attempts: Int
        /// The last failure: the handler's error, or why it was not run again.
        public let reason: String
        /// When it was last dead-lettered (the database's clock).
        public let deadAt: Date
        /// When it was requeued, while its consumer has not tried it again; `nil` otherwise.
        public let requeuedAt: Date?
    }
}
