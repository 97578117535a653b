import EventBusRemote
import Foundation
import PostgresNIO

/// Dead letters: the events a consumer's transactional handler failed on, moved out of its way.
///
/// A dead letter is a row of `eventbus_dead_letters`: the consumer, the outbox row's id and a copy
/// of its envelope (retention may delete the outbox row), how many attempts failed and why. It is
/// inserted in the transaction that moves the consumer's cursor past the event. Requeuing marks it
/// (`requeued_at`): the consumer's lease holder picks requeued letters up, one per transaction,
/// before its next outbox batch, runs the handler again (the same tries), and deletes the letter in
/// the handler's transaction, or marks it dead again (reported again). A requeued letter's
/// `requeue_attempts` is counted before its transaction begins, as the cursor's attempts are, so a
/// letter whose handler kills the process goes back to the dead after `maximumAttempts` deaths.
extension DurableOutbox {
    /// Inserts a dead letter of `consumer` (this outbox's by default) for `row`, in the transaction
    /// open on `connection` if there is one; returns its id.
    func insertDeadLetter(
        _ row: Row, of consumer: String? = nil, wireName: String, attempts: Int, reason: String,
        on connection: PostgresConnection
    ) async throws -> Int64 {
        let rows = try await connection.query(
            """
            INSERT INTO eventbus_dead_letters (channel, consumer, outbox_id, wire_name, payload, attempts, reason)
            VALUES (\(channel), \(consumer ?? settings.consumer), \(row.position.id), \(wireName), \(row.envelope), \(Int32(clamping: attempts)), \(reason))
            RETURNING id
            """, logger: logger)
        var id: Int64 = 0
        for try await value in rows.decode(Int64.self) { id = value }
        return id
    }

    /// A requeued dead letter of this consumer, picked up for another try.
    private struct Requeued: Sendable {
        let id: Int64
        let wireName: String
        let payload: String
        let tries: Int
    }

    /// Tries the consumer's oldest requeued dead letter again, in a transaction of its own; returns
    /// whether there was one.
    func retryRequeued(on connection: PostgresConnection, _ inbox: RemoteInbox) async throws -> Bool {
        guard let letter = try await statement({ try await pickRequeued(on: connection) }) else { return false }
        let limits = settings.processing
        var failure: (attempts: Int, reason: String)?
        try await transaction(on: connection) {
            if letter.tries > limits.maximumAttempts {
                failure = (
                    letter.tries - 1,
                    "the transaction died \(letter.tries - 1) times while its handler ran after a requeue; not run again"
                )
            } else {
                switch inbox.storedEvent(letter.payload) {
                case .event(let stored):
                    if let handler = processors.handler(for: stored.event) {
                        failure = try await run(handler, on: stored.event, connection)
                    } else {
                        failure = (0, "requeued, but no handler for \(letter.wireName) is registered on this instance")
                    }
                case .held(let reason):
                    failure = (0, "requeued, but this instance cannot decode it: \(reason)")
                case .notAnEvent:
                    failure = (0, "requeued, but it is not an event this instance reads")
                }
            }
            // The fence, last (as the cursor's UPDATE is in a batch): the lock is held only until
            // the COMMIT, so the lease's renewal never waits for a handler.
            try await statement { try await lockCursor(on: connection) }
            if let failure {
                try await statement {
                    try await connection.query(
                        """
                        UPDATE eventbus_dead_letters SET requeued_at = NULL, attempts = attempts + \(Int32(clamping: failure.attempts)),
                            reason = \(failure.reason), dead_at = clock_timestamp()
                        WHERE id = \(letter.id)
                        """, logger: logger
                    ).consume()
                }
            } else {
                try await statement {
                    try await connection.query(
                        "DELETE FROM eventbus_dead_letters WHERE id = \(letter.id)", logger: logger
                    ).consume()
                }
            }
        }
        if let failure {
            logger.warning(
                "consumer \(settings.consumer): requeued dead letter \(letter.id) failed again: \(failure.reason)")
            inbox.deadLettered(
                consumer: settings.consumer, wireName: letter.wireName, letter: letter.id, attempts: failure.attempts,
                reason: failure.reason)
        }
        return true
    }

    /// Counts a try of the consumer's oldest requeued letter (committed at once, fenced by the lease).
    private func pickRequeued(on connection: PostgresConnection) async throws -> Requeued? {
        let rows = try await connection.query(
            """
            UPDATE eventbus_dead_letters d SET requeue_attempts = d.requeue_attempts + 1
            WHERE d.id = (
                    SELECT id FROM eventbus_dead_letters
                    WHERE channel = \(channel) AND consumer = \(settings.consumer) AND requeued_at IS NOT NULL
                    ORDER BY id LIMIT 1)
                AND EXISTS (
                    SELECT 1 FROM eventbus_cursors c
                    WHERE c.channel = \(channel) AND c.consumer = \(settings.consumer) AND c.owner = \(member)
                        AND c.lease_epoch = \(epoch))
            RETURNING d.id, d.wire_name, d.payload, d.requeue_attempts
            """, logger: logger)
        var letter: Requeued?
        for try await (id, wireName, payload, tries) in rows.decode((Int64, String, String, Int32).self) {
            letter = Requeued(id: id, wireName: wireName, payload: payload, tries: Int(tries))
        }
        return letter
    }

    /// Locks the consumer's cursor row for the current transaction if this bridge holds its lease;
    /// throws `leaseLost` otherwise (the transaction must then commit nothing).
    private func lockCursor(on connection: PostgresConnection) async throws {
        let rows = try await connection.query(
            """
            SELECT 1 FROM eventbus_cursors
            WHERE channel = \(channel) AND consumer = \(settings.consumer) AND owner = \(member)
                AND lease_epoch = \(epoch)
            FOR UPDATE
            """, logger: logger)
        var locked = false
        for try await _ in rows.decode(Int32.self) { locked = true }
        if !locked { throw PostgresEventBridgeError.leaseLost(consumer: settings.consumer) }
    }

    // MARK: Operations

    /// The channel's dead letters (of `consumer` and, if it names a consumer group, of its
    /// partitions' cursors `consumer#index`; or of every consumer), after id `after`, oldest first,
    /// `limit` at most; on a connection of `client`.
    func deadLetters(consumer: String?, after: Int64, limit: Int, client: PostgresClient) async throws
        -> [PostgresEventBridge.DeadLetter]
    {
        try await ensureSchema(client)
        let rows = try await client.query(
            """
            SELECT id, consumer, outbox_id, wire_name, payload, attempts, reason, dead_at, requeued_at
            FROM eventbus_dead_letters
            WHERE channel = \(channel) AND id > \(after)
                AND (\(consumer)::text IS NULL OR consumer = \(consumer) OR starts_with(consumer, \(consumer) || '#'))
            ORDER BY id LIMIT \(Int64(max(0, limit)))
            """, logger: logger)
        var letters: [PostgresEventBridge.DeadLetter] = []
        for try await (id, consumer, outboxID, wireName, payload, attempts, reason, deadAt, requeuedAt) in rows.decode(
            (Int64, String, Int64, String, String, Int32, String, Date, Date?).self)
        {
            letters.append(
                PostgresEventBridge.DeadLetter(
                    id: id, consumer: consumer, eventID: outboxID, wireName: wireName, envelope: payload,
                    attempts: Int(attempts), reason: reason, deadAt: deadAt, requeuedAt: requeuedAt))
        }
        return letters
    }

    /// Marks the channel's dead letters `id` (or, `nil`, all of `consumer`'s) requeued, if they are
    /// not already, and wakes the channel's receivers; returns how many it marked.
    func requeue(id: Int64?, consumer: String?, client: PostgresClient) async throws -> Int {
        try await ensureSchema(client)
        let rows = try await client.query(
            """
            WITH marked AS (
                UPDATE eventbus_dead_letters SET requeued_at = clock_timestamp(), requeue_attempts = 0
                WHERE channel = \(channel) AND requeued_at IS NULL
                    AND (\(id)::bigint IS NULL OR id = \(id))
                    AND (\(consumer)::text IS NULL OR consumer = \(consumer) OR starts_with(consumer, \(consumer) || '#'))
                RETURNING 1)
            SELECT count(*) FROM marked, (SELECT pg_notify(\(channel), \(Self.wakePayload))) AS woken
            """, logger: logger)
        var count = 0
        for try await value in rows.decode(Int64.self) { count = Int(value) }
        return count
    }
}
