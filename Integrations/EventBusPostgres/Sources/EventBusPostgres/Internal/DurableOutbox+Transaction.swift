import EventBus
import EventBusRemote
import PostgresNIO

/// Effects exactly once: a consumer with transactional handlers (`PostgresEventBridge.process(_:_:)`)
/// runs them in the transaction that moves its cursor, per batch.
///
/// For each batch: claim and read it (as every durable receiver does, two statements that commit
/// at once); count an attempt at the batch's first row on the cursor row (a statement of its own,
/// committed before any handler runs, so the count survives a `kill -9`); `BEGIN`; for each event
/// of a type with a handler, the handler on the transaction's connection. The first pass has no
/// savepoints; if a handler throws, the transaction is rolled back and the batch runs again with a
/// `SAVEPOINT` and `RELEASE` around each handler (one that throws: `ROLLBACK TO SAVEPOINT`, tried
/// again after a backoff, `maximumAttempts` times in all, the first pass's failure included, then
/// the event is inserted into `eventbus_dead_letters`); the cursor
/// moved past the events handled (the acknowledgement's UPDATE, fenced by the lease: a member that
/// lost it matches no row and rolls everything back); `COMMIT`. Only then are the events dispatched
/// on the bus, and the dead letters reported.
///
/// **Never stuck.** A transaction that dies (the process killed, the connection lost, a handler over
/// its timeout) leaves the attempt count of its first row and its claim behind. The next attempt
/// that finds a count of 2 or more at its first row, or a claim beyond the cursor left by a previous
/// process, handles the rows through that claim **one per transaction**, so that each such row's
/// count is exactly the number of transactions that started with it and died; a row whose count
/// exceeds `maximumAttempts` is dead-lettered without running its handler again.
///
/// **The duration cap.** After each event, a transaction older than `maximumTransactionDuration`
/// commits what it did (the cursor at the last event handled) and the rest goes to a new one.
extension DurableOutbox {
    /// A dead letter made in the current transaction, reported once it committed.
    struct Letter {
        let id: Int64
        let wireName: String
        let attempts: Int
        let reason: String
    }

    /// The transactional counterpart of `batch(_:on:into:)`: a requeued dead letter if there is
    /// one, else the next batch after `progress`, its handlers run in the transaction that moves
    /// the cursor; then the events are dispatched on the bus. Returns the progress and whether more
    /// may follow at once.
    func process(
        _ progress: Progress, on connection: PostgresConnection, client: PostgresClient, into inbox: RemoteInbox
    ) async throws -> (Progress, more: Bool) {
        if try await retryRequeued(on: connection, inbox) { return (progress, true) }
        var progress = progress
        let reader = reader(on: connection, client: client)
        guard let (rows, claim) = try await reader.claimAndRead(after: progress.position) else {
            return (progress, false)
        }
        let (last, claimed) = (claim.last, claim.count)
        // Reported before the events after them reach the bus (`DurableReader.batch`).
        let reported = reader.reportExpired(claim, inbox)
        guard let first = rows.first else {
            // Every claimed row was deleted by retention meanwhile: counted as expired, passed.
            try await transaction(on: connection) {
                try await reader.acknowledge(last, inbox, reported: reported)
            }
            progress.position = last
            return (progress, claimed >= settings.batchSize)
        }
        // A row held (not decodable here) runs no handler: it is not an attempt (an upgraded
        // instance must not find it counted).
        var attempts = 1
        var storedClaim: Position?
        let firstHeld = if case .held = inbox.storedEvent(first.envelope) { true } else { false }
        if !firstHeld {
            (attempts, storedClaim) = try await statement { try await countAttempt(at: first.position, on: connection) }
        }
        if attempts >= 2 {
            // A transaction that started here died: one row per transaction through its claim.
            progress.redeliverThrough = [progress.redeliverThrough, storedClaim, last].compactMap { $0 }.max()
        }
        let single = progress.redeliverThrough.map { first.position <= $0 } ?? false
        let limits = settings.processing
        var handled: [Row] = []
        var letters: [Letter] = []
        var held: String?
        var end = progress.position
        // First without savepoints (two round trips fewer per event). The first handler that
        // throws rolls the whole transaction back, and the batch runs again with a savepoint per
        // event, that failure counting as the event's first try.
        var optimistic: OptimisticFailure?
        while true {
            (handled, letters, held) = ([], [], nil)
            let started = ContinuousClock.now
            let savepoints = optimistic != nil
            do {
                try await transaction(on: connection) {
                    for row in single ? [first] : rows {
                        switch inbox.storedEvent(row.envelope) {
                        case .held(let reason):
                            held = reason
                        case .notAnEvent:
                            break
                        case .event(let stored):
                            guard let handler = processors.handler(for: stored.event) else { break }
                            let failure: (attempts: Int, reason: String)?
                            if attempts > limits.maximumAttempts {
                                failure = (
                                    attempts - 1,
                                    "the transaction died \(attempts - 1) times while its handler ran "
                                        + "(process killed, connection lost or handler timed out); not run again"
                                )
                            } else if !savepoints {
                                try await runOnce(handler, on: stored.event, row, connection)
                                failure = nil
                            } else {
                                let earlier = optimistic.flatMap { $0.row == row.position ? $0.reason : nil }
                                failure = try await run(handler, on: stored.event, connection, failedBefore: earlier)
                            }
                            if let failure {
                                let id = try await statement {
                                    try await insertDeadLetter(
                                        row, wireName: stored.wireName, attempts: failure.attempts,
                                        reason: failure.reason, on: connection)
                                }
                                letters.append(
                                    Letter(
                                        id: id, wireName: stored.wireName, attempts: failure.attempts,
                                        reason: failure.reason))
                            }
                        }
                        if held != nil { break }
                        handled.append(row)
                        if ContinuousClock.now - started >= limits.maximumTransactionDuration { break }
                    }
                    // Through the last event handled; through the claim when the batch is done
                    // (rows that retention deleted meanwhile are counted as expired).
                    end =
                        held != nil || handled.count < rows.count ? (handled.last?.position ?? progress.position) : last
                    try await reader.acknowledge(
                        end, inbox, claim: held == nil ? .keep : .releaseTo(progress.redeliverThrough),
                        reported: reported)
                }
                break
            } catch let failure as OptimisticFailure {
                optimistic = failure
            }
        }
        progress.position = end
        reading.recordHandled(end)
        if let through = progress.redeliverThrough, end >= through { progress.redeliverThrough = nil }
        for letter in letters {
            logger.warning("consumer \(settings.consumer) dead-lettered \(letter.wireName): \(letter.reason)")
            inbox.deadLettered(
                consumer: settings.consumer, wireName: letter.wireName, letter: letter.id, attempts: letter.attempts,
                reason: letter.reason)
        }
        if let held, let row = rows.dropFirst(handled.count).first {
            reader.hold(at: row.position, held, in: &progress, inbox)
        }
        // After the COMMIT: the bus gets what the cursor passed (at most once across a crash here).
        // A group's partition is a subset of each origin's events (`subset`), as in `batch`:
        // without it, a member with transactional handlers reported the other members' events
        // as `missed` (each gap in an origin's sequence), and dropped from its bus, as
        // `olderThanWindow`, an event whose origin had moved 256 sequences on in other partitions.
        if !handled.isEmpty { _ = await inbox.deliverAndWait(handled.map(\.envelope), subset: partition != nil) }
        let more = held == nil && (handled.count < rows.count || claimed >= settings.batchSize)
        return (progress, more)
    }

    /// Runs `body` between `BEGIN` and `COMMIT` on `connection`, each statement bounded by the
    /// statement timeout; rolls back (best effort) and rethrows if anything throws.
    func transaction(on connection: PostgresConnection, _ body: () async throws -> Void) async throws {
        try await statement { try await connection.query("BEGIN", logger: logger).consume() }
        do {
            try await body()
            try await statement { try await connection.query("COMMIT", logger: logger).consume() }
        } catch {
            _ = try? await statement { try await connection.query("ROLLBACK", logger: logger).consume() }
            throw error
        }
    }

    /// A handler that threw in a transaction without savepoints: the transaction is rolled back
    /// and the batch runs again with them.
    struct OptimisticFailure: Error {
        let row: Position
        let reason: String
    }

    /// Runs `handler` on `event` once, without a savepoint; throws ``OptimisticFailure`` if it
    /// throws (the transaction must then be rolled back), `handlerTimeout` if it overruns.
    func runOnce(
        _ handler: @escaping Processors.Handler, on event: any Event, _ row: Row, _ connection: PostgresConnection
    )
        async throws
    {
        let limit = settings.processing.handlerTimeout
        do {
            try await statement(within: limit) { try await handler(event, connection) }
        } catch PostgresEventBridgeError.statementTimeout {
            throw PostgresEventBridgeError.handlerTimeout(limit)
        } catch {
            let reason = "\(PostgresEventBridgeError.describing(error))"
            logger.info("consumer \(settings.consumer): handler failed (first try, no savepoint): \(reason)")
            throw OptimisticFailure(row: row.position, reason: reason)
        }
    }

    /// Runs `handler` on `event` inside a savepoint, up to `maximumAttempts` times in all (a
    /// backoff before each try after the first; `failedBefore`: the first try already failed so);
    /// `nil` once it succeeded, or the tries and the last error. Throws (the transaction is then
    /// lost) when the connection fails or the handler overruns its timeout.
    func run(
        _ handler: @escaping Processors.Handler, on event: any Event, _ connection: PostgresConnection,
        failedBefore: String? = nil
    ) async throws -> (attempts: Int, reason: String)? {
        let limits = settings.processing
        var delay = limits.retryDelay
        var reason = failedBefore ?? ""
        let tries = max(1, limits.maximumAttempts)
        let first = failedBefore == nil ? 1 : 2
        guard first <= tries else { return (tries, reason) }
        for attempt in first...tries {
            if attempt > 1 {
                try await Task.sleep(for: delay)
                delay *= 2
            }
            try await statement { try await connection.query("SAVEPOINT eventbus_event", logger: logger).consume() }
            do {
                try await statement(within: limits.handlerTimeout) { try await handler(event, connection) }
                try await statement {
                    try await connection.query("RELEASE SAVEPOINT eventbus_event", logger: logger).consume()
                }
                return nil
            } catch PostgresEventBridgeError.statementTimeout {
                throw PostgresEventBridgeError.handlerTimeout(limits.handlerTimeout)
            } catch {
                reason = "\(PostgresEventBridgeError.describing(error))"
                logger.info("consumer \(settings.consumer): handler failed (try \(attempt) of \(tries)): \(reason)")
                try await statement {
                    try await connection.query("ROLLBACK TO SAVEPOINT eventbus_event", logger: logger).consume()
                }
            }
        }
        return (tries, reason)
    }

    /// Counts a transaction starting at `first` on the cursor row (fenced by the lease, committed
    /// at once): returns how many have started there, this one included, and the stored claim.
    func countAttempt(at first: Position, on connection: PostgresConnection) async throws -> (Int, Position?) {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(channel)
        bindings.append(settings.consumer)
        bindings.append(member)
        bindings.append(try epoch)
        let at = "'\(first.xid)'::xid8"
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    UPDATE eventbus_cursors SET
                        attempts = CASE WHEN attempt_xid = \(at) AND attempt_id = \(first.id) THEN attempts + 1 ELSE 1 END,
                        attempt_xid = \(at), attempt_id = \(first.id)
                    WHERE channel = $1 AND consumer = $2 AND owner = $3 AND lease_epoch = $4
                    RETURNING attempts, claimed_xid::text, claimed_id
                    """, binds: bindings), logger: logger)
        var result: (Int, Position?)?
        for try await (attempts, xid, id) in rows.decode((Int32, String?, Int64?).self) {
            let claim = xid.flatMap(UInt64.init).flatMap { xid in id.map { Position(xid: xid, id: $0) } }
            result = (Int(attempts), claim)
        }
        guard let result else { throw PostgresEventBridgeError.leaseLost(consumer: settings.consumer) }
        return result
    }
}
