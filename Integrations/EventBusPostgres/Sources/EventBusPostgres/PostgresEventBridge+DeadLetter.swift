public import EventBusRemote

extension PostgresEventBridge {
    /// An event a durable consumer's transactional handler failed on
    /// (``PostgresEventBridge/process(_:_:)``), moved out of the consumer's way: a row of
    /// `eventbus_dead_letters` (`DurableDeadLetter`, shared by every durable store; its `eventID`
    /// is the outbox row's id), listed by ``PostgresEventBridge/deadLetters(consumer:after:limit:)``
    /// and requeued by ``PostgresEventBridge/requeue(_:)``.
    ///
    /// ```swift
    /// for letter in try await cluster.deadLetters() {
    ///     logger.error("\(letter.consumer) failed \(letter.attempts)× on \(letter.wireName): \(letter.reason)")
    /// }
    /// ```
    public typealias DeadLetter = DurableDeadLetter
}
