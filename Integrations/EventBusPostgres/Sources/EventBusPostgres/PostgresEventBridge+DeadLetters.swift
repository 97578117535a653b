extension PostgresEventBridge {
    /// The channel's dead letters, oldest first, a page at a time: those of `consumer` (`nil`:
    /// every consumer of the channel; a consumer group's name: those of its partitions, whose
    /// ``DeadLetter/consumer`` is the partition's cursor, `name#index`) with an id above `after`,
    /// `limit` at most. Pass the last id
    /// of a page as `after` to get the next one.
    ///
    /// Runs one indexed SELECT on a connection of the client's pool (from any instance of the
    /// channel, running or not): O(`limit`). Throws
    /// ``PostgresEventBridgeError/processingNeedsDurableDelivery`` at most once, and
    /// ``PostgresEventBridgeError/postgres(message:underlying:)`` when the query fails.
    ///
    /// ```swift
    /// var page = try await cluster.deadLetters(consumer: "billing", limit: 50)
    /// while let last = page.last {
    ///     for letter in page { print(letter.id, letter.wireName, letter.reason) }
    ///     page = try await cluster.deadLetters(consumer: "billing", after: last.id, limit: 50)
    /// }
    /// ```
    public func deadLetters(consumer: String? = nil, after: Int64 = 0, limit: Int = 100) async throws -> [DeadLetter] {
        guard let outbox = transport.outbox else { throw PostgresEventBridgeError.processingNeedsDurableDelivery }
        do {
            return try await outbox.deadLetters(
                consumer: consumer, after: after, limit: limit, client: transport.client)
        } catch {
            throw PostgresEventBridgeError.describing(error)
        }
    }

    /// Requeues dead letter `id`: its consumer runs its handler on the event again, in a
    /// transaction of its own, before its next batch (whichever instance holds the consumer's lease
    /// then), and deletes the letter in that transaction if the handler succeeds (the effect once),
    /// or makes it dead again (its ``DeadLetter/attempts`` grown, reported again as
    /// `BridgeIssue.deadLettered(...)`). The bus does not get the event again (it got it when the
    /// consumer first passed it). Returns `false` if there is no such dead letter on this channel,
    /// or it is requeued already. Only a bridge of that consumer with a transactional handler
    /// registered (``process(_:_:)``, any type) picks requeued letters up; until one runs, they wait.
    ///
    /// One UPDATE and a wake-up NOTIFY on a connection of the client's pool; the consumer then
    /// spends one statement per batch looking for requeued letters (an index scan that finds none
    /// in the common case) and one transaction per requeued letter. Throws as
    /// ``deadLetters(consumer:after:limit:)`` does.
    ///
    /// ```swift
    /// for letter in try await cluster.deadLetters(consumer: "billing") where letter.reason.contains("timeout") {
    ///     try await cluster.requeue(letter.id)
    /// }
    /// ```
    @discardableResult
    public func requeue(_ id: DeadLetter.ID) async throws -> Bool {
        try await requeue(id: id, consumer: nil) > 0
    }

    /// Requeues every dead letter of `consumer` (a consumer group's name: of its partitions) on this
    /// channel that is not requeued already, as
    /// ``requeue(_:)`` does each; returns how many. The consumer tries them one per transaction,
    /// oldest first, before its next outbox batches. Throws as ``deadLetters(consumer:after:limit:)``
    /// does.
    ///
    /// ```swift
    /// let count = try await cluster.requeueDeadLetters(of: "billing")   // after fixing the handler
    /// ```
    @discardableResult
    public func requeueDeadLetters(of consumer: String) async throws -> Int {
        try await requeue(id: nil, consumer: consumer)
    }

    private func requeue(id: Int64?, consumer: String?) async throws -> Int {
        guard let outbox = transport.outbox else { throw PostgresEventBridgeError.processingNeedsDurableDelivery }
        do {
            return try await outbox.requeue(id: id, consumer: consumer, client: transport.client)
        } catch {
            throw PostgresEventBridgeError.describing(error)
        }
    }
}
