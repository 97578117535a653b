/// A ``DurableStore`` that also keeps dead letters: the events a consumer's handler failed on,
/// moved out of its way, listed and requeued by an operator.
///
/// A dead letter keeps a copy of its event's envelope (retention may delete the event), the
/// consumer (a group's partition cursor, `name#index`, whose holder tries it again), how many
/// tries failed and why. Requeuing marks it; the consumer's holder tries a requeued letter again
/// before its next batch and deletes it, or sets it aside again. `EventBusPostgres` writes a
/// letter in the transaction that moves the consumer's cursor past the event (its handlers run in
/// that transaction: effects exactly once); ``InMemoryDurableStore`` keeps them in memory. Both
/// pass `DurableDeadLetterStoreConformance`.
///
/// Every method may be called from any thread, concurrently.
///
/// ```swift
/// for letter in try await store.deadLetters(of: "billing", after: 0, limit: 100) {
///     print(letter.consumer, letter.wireName, letter.reason)
/// }
/// try await store.requeueDeadLetters(nil, of: "billing")
/// ```
public protocol DurableDeadLetterStore: DurableStore {
    /// Sets `event` aside as a dead letter of `consumer` after `attempts` failed tries, for
    /// `reason`; returns its id (ids only grow).
    func deadLetter(
        _ event: DurableEvent<Position>, of consumer: String, wireName: String, attempts: Int, reason: String
    ) async throws -> Int64

    /// The dead letters of `consumer` and, if it names a group, of its partitions' cursors
    /// (`consumer#index`; `nil`: of every consumer), with ids after `after`, oldest first, `limit`
    /// at most (none for a `limit` below 1).
    func deadLetters(of consumer: String?, after: Int64, limit: Int) async throws -> [DurableDeadLetter]

    /// Marks dead letter `id` (`nil`: every one of `consumer`, as ``deadLetters(of:after:limit:)``
    /// selects them; both `nil`: every one) requeued unless it already is, and wakes the channel's
    /// readers; returns how many it marked.
    func requeueDeadLetters(_ id: Int64?, of consumer: String?) async throws -> Int
}
