import EventBusRemote
import Foundation
import Logging
import PostgresNIO

/// Scheduled events: rows of `eventbus_schedule` that a firer moves into the outbox when due by the
/// database's clock.
///
/// A row holds the event encoded at scheduling time (a `RemoteBridge.PendingEvent`, with a MAC over
/// its fields, its id and its channel when there is a key), never an envelope: the firing bridge
/// seals it (origin, sequence, clock, MAC) in the transaction that inserts it into the outbox. The
/// firer selects due rows `FOR UPDATE SKIP LOCKED`, so firers of several instances take disjoint
/// rows, and marks them fired in the same transaction as the outbox insert: a firer killed before
/// its COMMIT fires nothing and leaves the rows to the next firer. A row is never deleted when it
/// fires or is cancelled, only marked (so that a cancel can say who won), and deleted by cleanup
/// after ``PostgresEventBridge/Scheduling/retention``. Nothing per pending row is kept in memory:
/// a pass reads at most a batch.
extension DurableOutbox {
    /// The INSERT of a scheduled event.
    func scheduleQuery(id: UUID, due: DurableDue, pending: RemoteBridge.PendingEvent) -> PostgresQuery {
        let dueSQL: PostgresQuery
        switch due {
        case .after(let delay):
            let milliseconds = Double(delay / .milliseconds(1))
            dueSQL = """
                INSERT INTO eventbus_schedule (id, channel, due_at, wire_name, key_json, context_json, payload, mac)
                VALUES (\(id), \(channel), clock_timestamp() + \(milliseconds)::float8 * interval '1 millisecond',
                    \(pending.wireName), \(pending.keyJSON), \(pending.contextJSON), \(pending.payload), \(pending.mac))
                """
        case .at(let date):
            dueSQL = """
                INSERT INTO eventbus_schedule (id, channel, due_at, wire_name, key_json, context_json, payload, mac)
                VALUES (\(id), \(channel), \(date), \(pending.wireName), \(pending.keyJSON), \(pending.contextJSON),
                    \(pending.payload), \(pending.mac))
                """
        }
        return dueSQL
    }

    /// Marks the scheduled event `id` cancelled unless it fired, was cancelled or refused first, on
    /// `connection`; says which. The UPDATE waits for a firer that holds the row (its transaction
    /// decides); a second statement, which sees that transaction's outcome, tells the others apart.
    func cancel(_ id: UUID, on connection: PostgresConnection) async throws -> ScheduledEventCancellation {
        for _ in 0..<10 {
            let cancelled = try await connection.query(
                """
                UPDATE eventbus_schedule SET cancelled_at = clock_timestamp()
                WHERE id = \(id) AND channel = \(channel) AND fired_at IS NULL AND cancelled_at IS NULL
                RETURNING 1
                """, logger: logger)
            var count = 0
            for try await _ in cancelled { count += 1 }
            if count > 0 { return .cancelled }
            let rows = try await connection.query(
                """
                SELECT fired_at IS NOT NULL, cancelled_at IS NOT NULL, refused FROM eventbus_schedule
                WHERE id = \(id) AND channel = \(channel)
                """, logger: logger)
            var state: (fired: Bool, cancelled: Bool, refused: String?)?
            for try await row in rows.decode((Bool, Bool, String?).self) { state = row }
            guard let state else { return .unknown }
            if state.fired { return .alreadyFired }
            if let reason = state.refused { return .refused(reason: reason) }
            if state.cancelled { return .alreadyCancelled }
            // Pending, yet not matched: inserted by a transaction that committed between the two
            // statements. Try again.
        }
        return .unknown
    }

    /// One firing pass on a connection of `client`: in one transaction, locks up to a batch of the
    /// channel's rows due by the database's clock (plus `offset`) that no other firer holds, seals
    /// each with `seal`, inserts the envelopes into the outbox (in due order) with one wake-up, and
    /// marks the rows fired (or refused, with the reason `seal` threw); returns how many rows it
    /// took. Bounded by the statement timeout: a pass that hangs on a dead connection is abandoned
    /// (its transaction then commits or rolls back on the server, either way once).
    func fire(
        _ client: PostgresClient, batchSize: Int, offset: Duration,
        seal: @escaping @Sendable (DurableDueEvent) throws -> String
    ) async throws -> Int {
        try await ensureSchema(client)
        return try await statement {
            try await client.withConnection { connection in
                try await connection.query("BEGIN", logger: logger).consume()
                do {
                    let taken = try await firePass(on: connection, batchSize: batchSize, offset: offset, seal: seal)
                    try await connection.query("COMMIT", logger: logger).consume()
                    return taken
                } catch {
                    try? await connection.query("ROLLBACK", logger: logger).consume()
                    throw error
                }
            }
        }
    }

    /// The SELECT compares with `statement_timestamp()`, the database's clock when it starts: a
    /// stable value, so the partial index `eventbus_schedule_due` bounds the scan to the due rows
    /// (`clock_timestamp()`, volatile, made every pass read every pending row of the channel: 59 ms
    /// for 100,000 pending rows, against 0.02 ms).
    private func firePass(
        on connection: PostgresConnection, batchSize: Int, offset: Duration,
        seal: @Sendable (DurableDueEvent) throws -> String
    ) async throws -> Int {
        let milliseconds = Double(offset / .milliseconds(1))
        let rows = try await connection.query(
            """
            SELECT id, wire_name, key_json, context_json, payload, mac FROM eventbus_schedule
            WHERE channel = \(channel) AND fired_at IS NULL AND cancelled_at IS NULL
                AND due_at <= statement_timestamp() + \(milliseconds)::float8 * interval '1 millisecond'
            ORDER BY due_at, id LIMIT \(batchSize)
            FOR UPDATE SKIP LOCKED
            """, logger: logger)
        var due: [DurableDueEvent] = []
        for try await (id, wireName, keyJSON, contextJSON, payload, mac) in rows.decode(
            (UUID, String, String?, String?, String, String?).self)
        {
            due.append(
                DurableDueEvent(
                    id: id,
                    pending: RemoteBridge.PendingEvent(
                        wireName: wireName, keyJSON: keyJSON, contextJSON: contextJSON, payload: payload, mac: mac)))
        }
        if due.isEmpty { return 0 }
        var envelopes: [String] = []
        var fired: [String] = []
        var refusedIDs: [String] = []
        var reasons: [String] = []
        for row in due {
            do {
                envelopes.append(try seal(row))
                fired.append(row.id.uuidString)
            } catch {
                refusedIDs.append(row.id.uuidString)
                reasons.append("\(error)")
            }
        }
        var bindings = PostgresBindings(capacity: 6)
        bindings.append(channel)
        bindings.append(envelopes)
        bindings.append(fired)
        bindings.append(refusedIDs)
        bindings.append(reasons)
        bindings.append(envelopes.map(RemoteBridge.orderingHash(ofEnvelope:)))
        try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    WITH inserted AS (
                        INSERT INTO eventbus_outbox (channel, payload, ordering_hash)
                        SELECT $1, u.payload, u.hash
                        FROM unnest($2::text[], $6::int4[]) WITH ORDINALITY AS u(payload, hash, n) ORDER BY u.n
                        RETURNING 1),
                    fired AS (
                        UPDATE eventbus_schedule SET fired_at = clock_timestamp()
                        WHERE id = ANY($3::text[]::uuid[]) RETURNING 1),
                    refused AS (
                        UPDATE eventbus_schedule s SET cancelled_at = clock_timestamp(), refused = r.reason
                        FROM unnest($4::text[]::uuid[], $5::text[]) AS r(id, reason) WHERE s.id = r.id RETURNING 1)
                    SELECT pg_notify($1, '\(Self.wakePayload)') WHERE cardinality($2::text[]) > 0
                    """, binds: bindings), logger: logger
        ).consume()
        return due.count
    }

    /// Deletes the channel's fired, cancelled and refused rows older than the retention, at most
    /// ``cleanupBatch`` per statement.
    func cleanUpSchedule(_ client: PostgresClient) async throws {
        let age = Int(max(.zero, settings.scheduling.retention) / .milliseconds(1))
        let query: PostgresQuery = """
            WITH doomed AS (
                SELECT id FROM eventbus_schedule
                WHERE channel = \(channel) AND (fired_at IS NOT NULL OR cancelled_at IS NOT NULL)
                    AND coalesce(fired_at, cancelled_at) < now() - \(Double(age))::float8 * interval '1 millisecond'
                LIMIT \(Self.cleanupBatch)),
            gone AS (DELETE FROM eventbus_schedule s USING doomed d WHERE s.id = d.id RETURNING 1)
            SELECT count(*) FROM gone
            """
        _ = try await repeatUntilShort(query, client)
    }
}
