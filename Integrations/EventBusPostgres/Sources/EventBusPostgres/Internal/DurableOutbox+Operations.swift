import EventBusRemote
import Foundation
import Logging
import PostgresNIO

/// Operations on the channel's consumers (issue 38, point 8): their lag, listing, removing, and
/// resetting a cursor; and, on the consumer's side, the lag gauge and the announcement of a reset.
///
/// All the SQL of these operations is here. A reset is written into the consumer's cursor row
/// (`reset_point`, `reset_at`, `reset_from_xid`, `reset_from_id`) in the transaction that moves
/// the cursor and bumps the lease epoch; the bridge that reads for the consumer announces it
/// (``BridgeIssue/cursorReset(consumer:to:again:skipped:)``) when it takes the lease next, before
/// it reads from the new cursor.
extension DurableOutbox {
    /// The tables and indexes of ``tables``, then the columns of a pending cursor reset (added to
    /// an existing table only when missing: see the lease's columns for why the check).
    static let schema =
        tables + [
            addingColumns(
                to: "eventbus_cursors", "reset_point text", "reset_at timestamptz", "reset_from_xid xid8",
                "reset_from_id bigint")
        ]

    /// The most unread rows a running consumer counts when it measures its own lag: beyond it,
    /// ``ConsumerLag/unreadIsExact`` is `false` (each measure is an index range scan over at most
    /// this many rows).
    static let lagCountLimit = 100_000

    // MARK: Consumer groups

    /// The condition an outbox row `o` meets to be the cursor row `c`'s: every row of the channel
    /// for a plain consumer; for a group's partition, the rows whose ordering hash falls in it (as
    /// the partition's reader and the cleanup count them; a row written before groups, without a
    /// hash, is partition 0's).
    static func partitionFilter(cursor c: String = "c", row o: String = "o") -> String {
        "(\(c).partitions IS NULL OR coalesce(\(o).ordering_hash, 0) % \(c).partitions = \(c).partition)"
    }

    // MARK: Listing and lag

    /// Every consumer of the channel (or only `name`), with its exact lag: one statement on a
    /// connection of `client`, an index range scan over each consumer's unread rows.
    func consumers(named name: String? = nil, client: PostgresClient) async throws
        -> [PostgresEventBridge.ConsumerDescription]
    {
        try await ensureSchema(client)
        return try await client.withConnection { connection in
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(channel)
            bindings.append(name)
            let rows = try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT c.consumer, c.group_name, c.partition, c.partitions, c.id, c.claimed_id, c.expired,
                            c.updated_at, c.owner, c.lease_until, c.lease_epoch,
                            coalesce(c.owner IS NOT NULL AND c.lease_until > now(), false), u.n, u.oldest,
                            extract(epoch FROM now() - u.oldest)::float8,
                            CASE WHEN c.updated_at > c.reset_at THEN NULL ELSE c.reset_point END
                        FROM eventbus_cursors c
                        LEFT JOIN LATERAL (
                            SELECT count(*) AS n, min(o.created_at) AS oldest FROM eventbus_outbox o
                            WHERE o.channel = c.channel AND (o.xid, o.id) > (c.xid, c.id) AND \(Self.partitionFilter())
                        ) AS u ON true
                        WHERE c.channel = $1 AND ($2::text IS NULL OR c.consumer = $2)
                        ORDER BY c.consumer
                        """, binds: bindings), logger: logger)
            var consumers: [PostgresEventBridge.ConsumerDescription] = []
            for try await row in rows.decode(
                (
                    String, String?, Int32?, Int32?, Int64, Int64?, Int64, Date, UUID?, Date?, Int64, Bool, Int64,
                    Date?, Double?, String?
                ).self)
            {
                let (consumer, group, partition, partitions, id, claimed, expired, updated, owner, until, epoch) = (
                    row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8, row.9, row.10
                )
                let (live, unread, oldest, age, reset) = (row.11, row.12, row.13, row.14, row.15)
                let lease: PostgresEventBridge.ConsumerLease
                switch (owner, until) {
                case (let owner?, let until?):
                    lease =
                        live
                        ? .held(by: owner, until: until, epoch: epoch) : .lapsed(by: owner, at: until, epoch: epoch)
                default:
                    lease = .free(epoch: epoch)
                }
                consumers.append(
                    PostgresEventBridge.ConsumerDescription(
                        name: consumer, group: group, partition: partition.map(Int.init),
                        partitions: partitions.map(Int.init), unread: Int(unread), oldestUnreadAt: oldest,
                        oldestUnreadAge: age.map { Duration.milliseconds(Int64(($0 * 1000).rounded())) },
                        lease: lease, lastAcknowledgedAt: updated, cursorRowID: id, claimedThroughRowID: claimed,
                        unreportedExpired: Int(expired), pendingReset: reset))
            }
            return consumers
        }
    }

    /// The lag of this consumer, or of the partitions of consumer group `group` whose lease this
    /// bridge holds, each counted up to ``lagCountLimit`` rows, on `connection`: per cursor, an
    /// index range scan over at most that many rows of its own (for a partition, the scan also
    /// passes the other partitions' rows between them).
    func ownLags(group: String?, on connection: PostgresConnection) async throws -> [ConsumerLag] {
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(channel)
        bindings.append(settings.consumer)
        bindings.append(group)
        bindings.append(member)
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT c.consumer, c.group_name, c.partition, u.n, extract(epoch FROM now() - u.oldest)::float8
                    FROM eventbus_cursors c
                    LEFT JOIN LATERAL (
                        SELECT count(*) AS n, min(t.created_at) AS oldest FROM (
                            SELECT o.created_at FROM eventbus_outbox o
                            WHERE o.channel = c.channel AND (o.xid, o.id) > (c.xid, c.id) AND \(Self.partitionFilter())
                            ORDER BY o.xid, o.id LIMIT \(Self.lagCountLimit + 1)) AS t
                    ) AS u ON true
                    WHERE c.channel = $1
                        AND CASE WHEN $3::text IS NULL THEN c.consumer = $2
                            ELSE c.group_name = $3 AND c.owner = $4 AND c.lease_until > now() END
                    ORDER BY c.consumer
                    """, binds: bindings), logger: logger)
        var lags: [ConsumerLag] = []
        for try await (consumer, group, partition, count, age) in rows.decode(
            (String, String?, Int32?, Int64, Double?).self)
        {
            lags.append(
                ConsumerLag(
                    consumer: consumer, group: group, partition: partition.map(Int.init),
                    unread: min(Int(count), Self.lagCountLimit), unreadIsExact: count <= Self.lagCountLimit,
                    oldestUnreadAge: age.map { Duration.milliseconds(Int64(($0 * 1000).rounded())) }))
        }
        return lags
    }

    /// Measures this consumer's lag (or, `group`, that of the group's partitions this bridge
    /// holds) every ``PostgresEventBridge/Durable/lagInterval`` on connections of `client`, handing
    /// each measure to the inbox (``RemoteBridge/lag``, the gauges), until cancelled; a failed
    /// measure is logged and tried again at the next interval. Runs beside the reading while this
    /// bridge holds the consumer's lease (or is a member of the group).
    func measureLag(_ inbox: RemoteInbox, client: PostgresClient, group: String? = nil) async {
        guard let interval = settings.lagInterval, interval > .zero else {
            // Measuring is off: wait for the end of the reading, as the other tasks do.
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            return
        }
        while !Task.isCancelled {
            do {
                let lags = try await statement {
                    try await client.withConnection { try await ownLags(group: group, on: $0) }
                }
                if let group {
                    inbox.lag(lags, ofGroup: group)
                } else {
                    for lag in lags { inbox.lag(lag) }
                }
            } catch {
                if Task.isCancelled { return }
                logger.info("measuring the lag of consumer \(settings.consumer) failed: \(error)")
            }
            try? await Task.sleep(for: interval)
        }
    }

    // MARK: Removing

    /// Deletes the cursor row of consumer `name` unless its lease is live (or `force`).
    func removeConsumer(_ name: String, force: Bool, client: PostgresClient) async throws
        -> PostgresEventBridge.ConsumerRemoval
    {
        try await ensureSchema(client)
        return try await client.withConnection { connection in
            let rows = try await connection.query(
                """
                WITH target AS (
                    SELECT consumer, owner, lease_until, coalesce(owner IS NOT NULL AND lease_until > now(), false) AS live
                    FROM eventbus_cursors WHERE channel = \(channel) AND consumer = \(name) FOR UPDATE),
                gone AS (
                    DELETE FROM eventbus_cursors c USING target t
                    WHERE c.channel = \(channel) AND c.consumer = t.consumer AND (\(force) OR NOT t.live)
                    RETURNING 1)
                SELECT t.owner, t.lease_until, t.live, (SELECT count(*) FROM gone) FROM target t
                """, logger: logger)
            var removal = PostgresEventBridge.ConsumerRemoval.unknown
            for try await (owner, until, live, deleted) in rows.decode((UUID?, Date?, Bool, Int64).self) {
                switch (deleted > 0, live, owner, until) {
                case (true, true, let owner?, let until?): removal = .removedWhileLeased(by: owner, until: until)
                case (true, _, _, _): removal = .removed
                case (false, _, let owner?, let until?): removal = .leased(by: owner, until: until)
                case (false, _, _, _): removal = .unknown
                }
            }
            return removal
        }
    }

    /// Deletes the cursor rows of every partition of consumer group `group` in one statement,
    /// unless a live bridge holds the lease of one of them (or `force`); `.unknown` when no row
    /// has that group.
    func removeGroup(_ group: String, force: Bool, client: PostgresClient) async throws
        -> PostgresEventBridge.ConsumerRemoval
    {
        try await ensureSchema(client)
        return try await client.withConnection { connection in
            let rows = try await connection.query(
                """
                WITH target AS (
                    SELECT consumer, owner, lease_until,
                        coalesce(owner IS NOT NULL AND lease_until > now(), false) AS live
                    FROM eventbus_cursors WHERE channel = \(channel) AND group_name = \(group)
                    ORDER BY consumer FOR UPDATE),
                blocking AS (SELECT owner, lease_until FROM target WHERE live ORDER BY lease_until DESC LIMIT 1),
                gone AS (
                    DELETE FROM eventbus_cursors c USING target t
                    WHERE c.channel = \(channel) AND c.consumer = t.consumer
                        AND (\(force) OR NOT EXISTS (SELECT 1 FROM blocking))
                    RETURNING 1)
                SELECT (SELECT count(*) FROM target), (SELECT count(*) FROM gone), b.owner, b.lease_until
                FROM (SELECT 1) AS one LEFT JOIN blocking b ON true
                """, logger: logger)
            var removal = PostgresEventBridge.ConsumerRemoval.unknown
            for try await (found, deleted, owner, until) in rows.decode((Int64, Int64, UUID?, Date?).self) {
                switch (found, deleted, owner, until) {
                case (0, _, _, _): removal = .unknown
                case (_, 1..., let owner?, let until?): removal = .removedWhileLeased(by: owner, until: until)
                case (_, 1..., _, _): removal = .removed
                case (_, _, let owner?, let until?): removal = .leased(by: owner, until: until)
                default: removal = .unknown
                }
            }
            return removal
        }
    }

    // MARK: Resetting

    /// Moves consumer `name`'s cursor to `point` in one transaction: locks its row, finds the
    /// position, counts the rows between the old and new positions, writes the position and the
    /// pending announcement, and bumps the lease epoch (so a running holder's next claim,
    /// acknowledgement or renewal fails, and it reads again from the new cursor).
    func resetCursor(of name: String, to point: PostgresEventBridge.ReplayPoint, client: PostgresClient)
        async throws -> PostgresEventBridge.CursorReset
    {
        try await ensureSchema(client)
        return try await client.withConnection { connection in
            try await connection.query("BEGIN", logger: logger).consume()
            do {
                let reset = try await resetCursor(of: name, to: point, on: connection)
                try await connection.query("COMMIT", logger: logger).consume()
                return reset
            } catch {
                try? await connection.query("ROLLBACK", logger: logger).consume()
                throw error
            }
        }
    }

    /// The statements of ``resetCursor(of:to:client:)``, in the transaction open on `connection`.
    private func resetCursor(
        of name: String, to point: PostgresEventBridge.ReplayPoint, on connection: PostgresConnection
    ) async throws -> PostgresEventBridge.CursorReset {
        let stored = try await connection.query(
            """
            SELECT xid::text, id, reset_from_xid::text, reset_from_id, coalesce(updated_at > reset_at, true),
                CASE WHEN owner IS NOT NULL AND lease_until > now() THEN owner END
            FROM eventbus_cursors WHERE channel = \(channel) AND consumer = \(name) FOR UPDATE
            """, logger: logger)
        var found: (current: Position, from: Position?, acknowledgedSince: Bool, holder: UUID?)?
        for try await (xid, id, fromXID, fromID, acknowledged, holder) in stored.decode(
            (String, Int64, String?, Int64?, Bool, UUID?).self)
        {
            let from = fromXID.flatMap(UInt64.init).flatMap { xid in fromID.map { Position(xid: xid, id: $0) } }
            found = (Position(xid: UInt64(xid) ?? 0, id: id), from, acknowledged, holder)
        }
        guard let found else { throw PostgresEventBridgeError.unknownConsumer(name) }
        var target = try await position(of: point, on: connection)
        // The end never moves a cursor back (over rows it acknowledged).
        if case .end = point { target = max(target, found.current) }
        // Counted from what the consumer last acknowledged: an earlier reset not yet announced
        // (nothing acknowledged since) keeps its starting point.
        let from = found.acknowledgedSince ? found.current : (found.from ?? found.current)
        let between = try await count(of: name, between: min(from, target), and: max(from, target), on: connection)
        let (again, skipped) = target < from ? (between, 0) : (0, between)
        // The attempt count of transactional handlers starts over (`attempts = 0`): the epoch's
        // bump kills a processing transaction open now, which is no failure of its handler. Left
        // counted, the replay's first batch, when it starts at the same row (a reset to the row
        // of the batch being handled), found a second attempt there and handled it one row per
        // transaction; with `maximumAttempts` 1 it dead-lettered that event without running its
        // handler ("the transaction died 1 times"): a false report and a missing effect.
        //
        // A claim beyond the new position is kept: its batch (a dead process's, or the one the
        // fenced holder is delivering) may have been delivered, and those rows are delivered again
        // after the reset. Dropped, as it was, they were announced neither as `redelivered` nor in
        // `again` (which counts from the acknowledged position); kept, the next holder announces
        // those after that position as `redelivered` (``resume(on:_:continuing:)``).
        let at = "('\(target.xid)'::xid8, \(target.id))"  // numbers only (UInt64, Int64)
        try await connection.query(
            """
            UPDATE eventbus_cursors SET xid = \(String(target.xid))::xid8, id = \(target.id),
                claimed_xid = CASE WHEN (claimed_xid, claimed_id) > \(unescaped: at) THEN claimed_xid END,
                claimed_id = CASE WHEN (claimed_xid, claimed_id) > \(unescaped: at) THEN claimed_id END,
                lease_epoch = lease_epoch + 1,
                attempts = 0, attempt_xid = NULL, attempt_id = NULL,
                reset_point = \(point.description), reset_at = clock_timestamp(),
                reset_from_xid = \(String(from.xid))::xid8, reset_from_id = \(from.id)
            WHERE channel = \(channel) AND consumer = \(name)
            """, logger: logger
        ).consume()
        return PostgresEventBridge.CursorReset(
            consumer: name, point: point, previousRowID: from.id, rowID: target.id, again: again,
            skipped: skipped, holder: found.holder)
    }

    /// Where `point` puts a cursor: just before the first row it delivers.
    private func position(of point: PostgresEventBridge.ReplayPoint, on connection: PostgresConnection)
        async throws -> Position
    {
        // `ORDER BY eventbus_outbox.xid`, not `xid`: that would name the output column, text, and
        // sort "999" after "1000".
        let query: PostgresQuery
        switch point {
        case .beginning:
            return Position(xid: 0, id: 0)
        case .end:
            // As a new consumer starts: after the last row no running transaction can precede.
            query = """
                SELECT xid::text, id + 1 FROM eventbus_outbox
                WHERE channel = \(channel) AND xid < pg_snapshot_xmin(pg_current_snapshot())
                ORDER BY eventbus_outbox.xid DESC, eventbus_outbox.id DESC LIMIT 1
                """
        case .time(let date):
            query = """
                SELECT xid::text, id FROM eventbus_outbox WHERE channel = \(channel) AND created_at >= \(date)
                ORDER BY eventbus_outbox.xid, eventbus_outbox.id LIMIT 1
                """
        case .row(let id):
            query = "SELECT xid::text, id FROM eventbus_outbox WHERE channel = \(channel) AND id = \(id)"
        }
        var first: Position?
        for try await (xid, id) in try await connection.query(query, logger: logger).decode((String, Int64).self) {
            // Just before that row: (xid, id - 1) sorts after every row before it.
            first = Position(xid: UInt64(xid) ?? 0, id: id - 1)
        }
        if let first { return first }
        switch point {
        case .row(let id): throw PostgresEventBridgeError.unknownOutboxRow(id)
        case .time: return try await position(of: .end, on: connection)
        case .beginning, .end: return Position(xid: 0, id: 0)
        }
    }

    /// Consumer `name`'s rows (of its partition, for a group's) after `low` through `high`.
    private func count(
        of name: String, between low: Position, and high: Position, on connection: PostgresConnection
    ) async throws -> Int {
        guard low < high else { return 0 }
        let rows = try await connection.query(
            """
            SELECT count(*) FROM eventbus_outbox o, eventbus_cursors c
            WHERE c.channel = \(channel) AND c.consumer = \(name) AND o.channel = \(channel)
                AND (o.xid, o.id) > (\(String(low.xid))::xid8, \(low.id))
                AND (o.xid, o.id) <= (\(String(high.xid))::xid8, \(high.id)) AND \(unescaped: Self.partitionFilter())
            """, logger: logger)
        var count: Int64 = 0
        for try await value in rows.decode(Int64.self) { count = value }
        return Int(count)
    }

    // MARK: The consumer's side

    /// Where the consumer had acknowledged up to when its cursor was reset, if the reset is still
    /// pending (nothing acknowledged since): the rows up to there that it reads again are counted
    /// in the reset's `again`, not as `redelivered`.
    func pendingResetFrom(on connection: PostgresConnection) async throws -> Position? {
        let rows = try await connection.query(
            """
            SELECT reset_from_xid::text, reset_from_id FROM eventbus_cursors
            WHERE channel = \(channel) AND consumer = \(settings.consumer) AND reset_point IS NOT NULL
                AND reset_from_xid IS NOT NULL AND NOT coalesce(updated_at > reset_at, false)
            """, logger: logger)
        var from: Position?
        for try await (xid, id) in rows.decode((String, Int64).self) {
            from = UInt64(xid).map { Position(xid: $0, id: id) }
        }
        return from
    }

    /// Run by the bridge that just took the consumer's lease of `epoch`, before it reads: reports
    /// a reset of its cursor that it has not acknowledged anything since
    /// (``BridgeIssue/cursorReset(consumer:to:again:skipped:)``), and clears one it has; reports
    /// ``BridgeIssue/consumerRemoved(consumer:)`` when the cursor row is younger than a lease this
    /// bridge held (someone deleted it while it ran, and ``start(on:)`` made a new one).
    func announceOperations(_ epoch: Int64, on connection: PostgresConnection, _ inbox: RemoteInbox) async throws {
        if operations.tookEpoch(epoch) { inbox.consumerRemoved(settings.consumer) }
        let rows = try await statement {
            try await connection.query(
                """
                WITH r AS (
                    SELECT reset_point, reset_from_xid, reset_from_id, xid, id, updated_at > reset_at AS acknowledged,
                        partition, partitions
                    FROM eventbus_cursors
                    WHERE channel = \(channel) AND consumer = \(settings.consumer) AND owner = \(member)
                        AND lease_epoch = \(epoch) AND reset_point IS NOT NULL
                    FOR UPDATE),
                cleared AS (
                    UPDATE eventbus_cursors c
                    SET reset_point = NULL, reset_at = NULL, reset_from_xid = NULL, reset_from_id = NULL
                    FROM r WHERE c.channel = \(channel) AND c.consumer = \(settings.consumer) AND r.acknowledged)
                SELECT r.reset_point, r.acknowledged,
                    (SELECT count(*) FROM eventbus_outbox o WHERE o.channel = \(channel)
                        AND (o.xid, o.id) > (r.xid, r.id) AND (o.xid, o.id) <= (r.reset_from_xid, r.reset_from_id)
                        AND \(unescaped: Self.partitionFilter(cursor: "r"))),
                    (SELECT count(*) FROM eventbus_outbox o WHERE o.channel = \(channel)
                        AND (o.xid, o.id) > (r.reset_from_xid, r.reset_from_id) AND (o.xid, o.id) <= (r.xid, r.id)
                        AND \(unescaped: Self.partitionFilter(cursor: "r")))
                FROM r
                """, logger: logger
            ).collect()
        }
        for row in rows {
            let (point, acknowledged, again, skipped) = try row.decode((String, Bool, Int64, Int64).self)
            guard !acknowledged else { continue }
            logger.notice("consumer \(settings.consumer)'s cursor was reset to \(point)")
            inbox.cursorReset(consumer: settings.consumer, to: point, again: Int(again), skipped: Int(skipped))
        }
    }
}
