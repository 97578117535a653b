import EventBusRemote
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// Durable delivery's side of PostgreSQL: the schema, the statements that write, read, acknowledge
/// and clean the outbox, and a receiver's loop over its cursor.
///
/// Rows are read in `(xid, id)` order, never in `id` order alone, and only once their transaction
/// id is below the oldest transaction still running (`pg_snapshot_xmin(pg_current_snapshot())`):
/// a `bigserial` id is taken when the row is inserted but becomes visible at COMMIT, so a lower id
/// can appear after a higher one was read (the outbox trap). Every transaction that can still
/// commit has an xid at or above that bound, so it sorts after every row already read, and a
/// cursor `(xid, id)` never skips a row that commits later.
struct DurableOutbox: Sendable {
    let channel: String
    let settings: PostgresEventBridge.Durable
    let logger: Logger
    private let state = NIOLockedValueBox(State())
    /// The consumer's transactional handlers (`PostgresEventBridge.process(_:_:)`), by event type:
    /// one registry for the bridge, shared by the outboxes of its group's partitions.
    let processors: Processors

    /// A place in the `(xid, id)` order of the channel's rows.
    struct Position: Comparable, Sendable, CustomStringConvertible {
        var xid: UInt64
        var id: Int64

        var description: String { "row \(id)" }

        static func < (left: Position, right: Position) -> Bool {
            (left.xid, left.id) < (right.xid, right.id)
        }
    }

    private struct State {
        var schemaReady = false
    }

    /// What the reader of this outbox's cursor remembers across reconnections (the lease held, the
    /// last row handled): one per outbox, shared by its copies.
    let reading = DurableReaderState<Position>()

    /// This bridge's id as the owner of its consumer's lease (of every partition's, in a group).
    let member: UUID

    /// The partition of a consumer group this outbox reads (its cursor named
    /// `settings.consumer`), or `nil` for a plain consumer.
    let partition: Partition?

    /// A partition of a consumer group: the rows whose ordering hash is `index` modulo `count`.
    struct Partition: Sendable {
        let group: String
        let index: Int
        let count: Int
    }

    /// What the operations on consumers remember (see `DurableOutbox+Operations.swift`).
    let operations = ConsumerOperationsState()

    /// The epoch of the lease held now; `leaseLost` if none (a statement must not run unfenced).
    var epoch: Int64 {
        get throws { try reading.epoch(orThrow: PostgresEventBridgeError.leaseLost(consumer: settings.consumer)) }
    }

    /// The NOTIFY payload that wakes durable receivers; it carries nothing else.
    static let wakePayload = "eventbus:wake"

    /// Rows each cleanup statement deletes at most: one short transaction each.
    static let cleanupBatch = 1_000

    /// The tables and indexes, created by the bridge under an advisory lock (`IF NOT EXISTS`).
    static let tables = [
        """
        CREATE TABLE IF NOT EXISTS eventbus_outbox (
            id bigserial PRIMARY KEY,
            channel text NOT NULL,
            xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
            created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            payload text NOT NULL)
        """,
        "CREATE INDEX IF NOT EXISTS eventbus_outbox_order ON eventbus_outbox (channel, xid, id)",
        "CREATE INDEX IF NOT EXISTS eventbus_outbox_channel_id ON eventbus_outbox (channel, id)",
        "CREATE INDEX IF NOT EXISTS eventbus_outbox_age ON eventbus_outbox (channel, created_at)",
        """
        CREATE TABLE IF NOT EXISTS eventbus_cursors (
            channel text NOT NULL,
            consumer text NOT NULL,
            xid xid8 NOT NULL,
            id bigint NOT NULL,
            claimed_xid xid8,
            claimed_id bigint,
            expired bigint NOT NULL DEFAULT 0,
            updated_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (channel, consumer))
        """,
        // Scheduled events (added after the two tables above: an existing database gets it at the
        // next start, the statements being idempotent).
        """
        CREATE TABLE IF NOT EXISTS eventbus_schedule (
            id uuid PRIMARY KEY,
            channel text NOT NULL,
            due_at timestamptz NOT NULL,
            created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            wire_name text NOT NULL,
            key_json text,
            context_json text,
            payload text NOT NULL,
            mac text,
            fired_at timestamptz,
            cancelled_at timestamptz,
            refused text)
        """,
        """
        CREATE INDEX IF NOT EXISTS eventbus_schedule_due ON eventbus_schedule (channel, due_at, id)
            WHERE fired_at IS NULL AND cancelled_at IS NULL
        """,
        """
        CREATE INDEX IF NOT EXISTS eventbus_schedule_done ON eventbus_schedule (channel, (coalesce(fired_at, cancelled_at)))
            WHERE fired_at IS NOT NULL OR cancelled_at IS NOT NULL
        """,
        // A consumer's lease (added later again: see addingColumns).
        addingColumns(
            to: "eventbus_cursors", "owner uuid", "lease_until timestamptz", "lease_epoch bigint NOT NULL DEFAULT 0"),
        // Consumer groups (added later again, the same way): the hash of each row's ordering key
        // (NULL in rows an instance of a version before wrote: partition 0), a cursor per partition,
        // and the members alive.
        addingColumns(to: "eventbus_outbox", "ordering_hash integer"),
        addingColumns(to: "eventbus_cursors", "group_name text", "partition integer", "partitions integer"),
        """
        CREATE TABLE IF NOT EXISTS eventbus_group_members (
            channel text NOT NULL,
            group_name text NOT NULL,
            member uuid NOT NULL,
            alive_until timestamptz NOT NULL,
            PRIMARY KEY (channel, group_name, member))
        """,
        // Transactional handlers (`DurableOutbox+Transaction.swift`): the dead letters, and the
        // attempts counted on the cursor rows (only when missing, as the lease's columns).
        """
        CREATE TABLE IF NOT EXISTS eventbus_dead_letters (
            id bigserial PRIMARY KEY,
            channel text NOT NULL,
            consumer text NOT NULL,
            outbox_id bigint NOT NULL,
            wire_name text NOT NULL,
            payload text NOT NULL,
            attempts integer NOT NULL,
            reason text NOT NULL,
            dead_at timestamptz NOT NULL DEFAULT clock_timestamp(),
            requeued_at timestamptz,
            requeue_attempts integer NOT NULL DEFAULT 0)
        """,
        "CREATE INDEX IF NOT EXISTS eventbus_dead_letters_consumer ON eventbus_dead_letters (channel, consumer, id)",
        """
        CREATE INDEX IF NOT EXISTS eventbus_dead_letters_requeued ON eventbus_dead_letters (channel, consumer, id)
            WHERE requeued_at IS NOT NULL
        """,
        addingColumns(
            to: "eventbus_cursors", "attempts integer NOT NULL DEFAULT 0", "attempt_xid xid8", "attempt_id bigint"),
    ]

    /// A `DO` block that adds `columns` (`"name type …"`) to `table` when the first is missing, each
    /// `IF NOT EXISTS`: the columns a later version added, to an existing table at the next start
    /// (instances of the version before ignore them). Only when missing: `ALTER TABLE` locks the
    /// table exclusively even when it has nothing to do, which would stall every consumer's claims
    /// at each start.
    static func addingColumns(to table: String, _ columns: String...) -> String {
        let marker = columns[0].prefix { $0 != " " }
        let additions = columns.map { "ADD COLUMN IF NOT EXISTS \($0)" }.joined(separator: ", ")
        return """
            DO $$ BEGIN
                IF NOT EXISTS (
                    SELECT 1 FROM pg_attribute
                    WHERE attrelid = '\(table)'::regclass AND attname = '\(marker)' AND NOT attisdropped)
                THEN
                    ALTER TABLE \(table) \(additions);
                END IF;
            END $$
            """
    }

    /// How long one statement of a receiver may take before the connection is given up.
    let statementTimeout: Duration

    init(
        channel: String, settings: PostgresEventBridge.Durable, statementTimeout: Duration, logger: Logger,
        member: UUID = UUID(), partition: Partition? = nil, processors: Processors = Processors()
    ) {
        self.processors = processors
        self.channel = channel
        self.settings = settings
        self.statementTimeout = statementTimeout
        self.logger = logger
        self.member = member
        self.partition = partition
        if let group = settings.group, partition == nil {
            var plain = settings
            plain.group = nil
            groupMember = GroupMember(
                group: group,
                base: DurableOutbox(
                    channel: channel, settings: plain, statementTimeout: statementTimeout, logger: logger,
                    member: member, processors: processors))
        } else {
            groupMember = nil
        }
    }

    /// This bridge's membership of its consumer group (``PostgresEventBridge/Durable/group``), which
    /// reads instead of this outbox; `nil` for a plain consumer.
    let groupMember: GroupMember?

    /// The outbox reading partition `index` of `group` for member `member`: its cursor is named
    /// `"<group>#<index>"`.
    func partition(_ index: Int, of group: PostgresEventBridge.ConsumerGroup) -> DurableOutbox {
        var settings = settings
        settings.consumer = group.cursorName(index)
        settings.group = nil
        return DurableOutbox(
            channel: channel, settings: settings, statementTimeout: statementTimeout, logger: logger, member: member,
            partition: Partition(group: group.name, index: index, count: group.partitions), processors: processors)
    }

    /// Runs a receiver's statement: its result, or an error once `statementTimeout` (or `limit`) has
    /// passed or the task is cancelled, whichever comes first. After `kill -9` of the server, postgres-nio
    /// can leave a statement on the dead connection pending for good; it is then abandoned (left
    /// to its own task), so that the receiver replaces the connection instead of hanging.
    /// `timeout`: a shorter limit than `statementTimeout` (a lease's renewal); `within`: another
    /// limit altogether (a transactional handler's `handlerTimeout`).
    func statement<T: Sendable>(
        timeout: Duration? = nil, within other: Duration? = nil, _ body: @escaping @Sendable () async throws -> T
    )
        async throws -> T
    {
        let outcome = NIOLockedValueBox<Outcome<T>>(.waiting(nil))
        let work = Task { try await body() }
        let limit = other ?? min(timeout ?? statementTimeout, statementTimeout)
        let timer = Task {
            try await Task.sleep(for: limit)
            Outcome.finish(outcome, with: .failure(PostgresEventBridgeError.statementTimeout(limit)))
        }
        Task { Outcome.finish(outcome, with: await work.result) }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let done: Result<T, any Error>? = outcome.withLockedValue { state in
                    if case .done(let result) = state { return result }
                    state = .waiting(continuation)
                    return nil
                }
                if let done { continuation.resume(with: done) }
            }
        } onCancel: {
            work.cancel()
            Outcome.finish(outcome, with: .failure(CancellationError()))
        }
    }

    /// Where ``statement(_:)`` stands: waiting (for its continuation, or with it), or decided.
    private enum Outcome<T: Sendable>: Sendable {
        case waiting(CheckedContinuation<T, any Error>?)
        case done(Result<T, any Error>)

        /// Decides `box` with `result` unless it is decided already; resumes its continuation
        /// outside the lock.
        static func finish(_ box: NIOLockedValueBox<Outcome<T>>, with result: Result<T, any Error>) {
            let continuation: CheckedContinuation<T, any Error>? = box.withLockedValue { state in
                guard case .waiting(let continuation) = state else { return nil }
                state = .done(result)
                return continuation
            }
            continuation?.resume(with: result)
        }
    }

    // MARK: Schema

    /// Creates the tables once per process, on a connection of `client`.
    func ensureSchema(_ client: PostgresClient) async throws {
        if state.withLockedValue({ $0.schemaReady }) { return }
        try await client.withConnection { try await ensureSchema(on: $0) }
    }

    /// Creates the tables once per process, on `connection` (not in a transaction of its own).
    func ensureSchema(on connection: PostgresConnection) async throws {
        if state.withLockedValue({ $0.schemaReady }) { return }
        try await connection.query("BEGIN", logger: logger).consume()
        do {
            // One creator at a time: concurrent CREATE ... IF NOT EXISTS can fail on the catalog.
            try await connection.query("SELECT pg_advisory_xact_lock(7305643902176813415)", logger: logger).consume()
            for statement in Self.schema {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger).consume()
            }
            try await connection.query("COMMIT", logger: logger).consume()
        } catch {
            try? await connection.query("ROLLBACK", logger: logger).consume()
            throw error
        }
        state.withLockedValue { $0.schemaReady = true }
    }

    // MARK: Publishing

    /// Inserts `payloads` in this order, each with the hash of its ordering key (consumer groups
    /// partition by it), and wakes the receivers at COMMIT: one statement.
    func insertQuery(_ payloads: [String]) -> PostgresQuery {
        PostgresQuery(unsafeSQL: Insert.sql, binds: insert(payloads).makeBindings())
    }

    /// The statement of ``insertQuery(_:)`` for `payloads`, prepared: the server parses, analyses
    /// and plans it once per connection of the pool, not at every send.
    func insert(_ payloads: [String]) -> Insert {
        Insert(channel: channel, payloads: payloads)
    }

    /// ``insertQuery(_:)`` as a prepared statement (one SQL text whatever the batch's size: the
    /// payloads are one array), for the serial publisher's sends.
    struct Insert: PostgresPreparedStatement {
        static let sql = """
            WITH inserted AS (
                INSERT INTO eventbus_outbox (channel, payload, ordering_hash)
                SELECT $1, u.payload, u.hash FROM unnest($2::text[], $3::int4[]) WITH ORDINALITY AS u(payload, hash, n)
                ORDER BY u.n
                RETURNING 1)
            SELECT pg_notify($1, '\(DurableOutbox.wakePayload)')
            """
        /// The channel.
        let channel: String
        /// The envelopes, in publish order.
        let payloads: [String]

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(channel)
            bindings.append(payloads)
            bindings.append(payloads.map(RemoteBridge.orderingHash(ofEnvelope:)))
            return bindings
        }

        func decodeRow(_ row: PostgresRow) {}
    }

    // MARK: Receiving

    /// The order of rows a consumer reads and the type of its batches' rows.
    typealias Progress = DurableProgress<Position>
    typealias Row = DurableEvent<Position>

    /// The generic reader of this outbox's cursor (``DurableReader``: the lease, standing by,
    /// resuming, claims, redelivery, holds, expired counts), its statements on `connection` (the
    /// listening one; `nil`: a connection of `client`'s pool each) and its lease renewed on
    /// `client`.
    func reader(on connection: PostgresConnection?, client: PostgresClient) -> DurableReader<PostgresDurableCursor> {
        DurableReader(
            cursor: PostgresDurableCursor(outbox: self, connection: connection, client: client),
            settings: DurableReading(
                batchSize: settings.batchSize, leaseDuration: settings.leaseDuration,
                pollInterval: settings.pollInterval),
            state: reading, note: { [logger] in logger.notice("\($0)") })
    }

    /// Reads the consumer's cursor into `inbox` until the task is cancelled or a statement fails
    /// (the connection is then replaced): ``DurableReader/run(into:waker:onLease:alongside:batch:)``
    /// with what PostgreSQL adds — a reset or removal announced when the lease is taken, the lag
    /// gauge measured meanwhile, and transactional handlers (``batch(_:on:client:into:)``). A group
    /// member's partitions are read by its ``GroupMember`` instead.
    func receive(
        on connection: PostgresConnection, into inbox: RemoteInbox, waker: DurableWaker, client: PostgresClient
    )
        async throws
    {
        if let groupMember {
            return try await groupMember.receive(on: connection, into: inbox, waker: waker, client: client)
        }
        let transactional: (@Sendable (Progress) async throws -> (Progress, more: Bool))? =
            processors.isEmpty
            ? nil : { @Sendable progress in try await process(progress, on: connection, client: client, into: inbox) }
        try await reader(on: connection, client: client).run(
            into: inbox, waker: waker,
            onLease: { epoch in try await announceOperations(epoch, on: connection, inbox) },
            alongside: { await measureLag(inbox, client: client) },
            batch: transactional)
    }

    /// The next batch after `progress`: the reader's (``DurableReader/batch(_:into:)``), or with
    /// the consumer's transactional handlers (``process(_:on:client:into:)``). Returns the progress
    /// and whether a full batch was read (more may follow at once).
    func batch(_ progress: Progress, on connection: PostgresConnection, client: PostgresClient, into inbox: RemoteInbox)
        async throws -> (Progress, more: Bool)
    {
        if !processors.isEmpty { return try await process(progress, on: connection, client: client, into: inbox) }
        return try await reader(on: connection, client: client).batch(progress, into: inbox)
    }

    /// Creates the consumer's cursor (after the channel's last committed row) if it is new: called
    /// before the receiver reports that it listens, so that every event published after that is
    /// after the cursor, whichever member of the consumer then holds its lease.
    func start(on connection: PostgresConnection) async throws {
        try await ensureSchema(on: connection)
        if let groupMember { return try await groupMember.start(on: connection) }
        guard try await statement({ try await storedCursor(on: connection) }) != nil else {
            throw PostgresEventBridgeError.connectionClosed
        }
        let isPartition = try await statement {
            var isPartition = false
            let rows = try await connection.query(
                """
                SELECT 1 FROM eventbus_cursors
                WHERE channel = \(channel) AND consumer = \(settings.consumer) AND group_name IS NOT NULL
                """, logger: logger)
            for try await _ in rows.decode(Int32.self) { isPartition = true }
            return isPartition
        }
        if isPartition { throw PostgresEventBridgeError.consumerNameTaken(settings.consumer) }
    }

    /// The consumer's stored cursor (created if new, a partition's with its group's columns): its
    /// position, its claim, its expired count.
    func storedCursor(on connection: PostgresConnection) async throws -> (Position, Position?, Int64)? {
        try await connection.query(
            """
            INSERT INTO eventbus_cursors (channel, consumer, xid, id, group_name, partition, partitions)
            SELECT \(channel), \(settings.consumer), coalesce(t.xid, '0'::xid8), coalesce(t.id, 0),
                \(partition?.group), \(partition.map { Int32($0.index) }), \(partition.map { Int32($0.count) })
            FROM (SELECT 1) AS one LEFT JOIN LATERAL (
                SELECT xid, id FROM eventbus_outbox
                WHERE channel = \(channel) AND xid < pg_snapshot_xmin(pg_current_snapshot())
                ORDER BY xid DESC, id DESC LIMIT 1) AS t ON true
            ON CONFLICT (channel, consumer) DO NOTHING
            """, logger: logger
        ).consume()
        let rows = try await connection.query(
            """
            SELECT xid::text, id, claimed_xid::text, claimed_id, expired FROM eventbus_cursors
            WHERE channel = \(channel) AND consumer = \(settings.consumer)
            """, logger: logger)
        var cursor: (Position, Position?, Int64)?
        for try await (xid, id, claimedXID, claimedID, expired) in rows.decode(
            (String, Int64, String?, Int64?, Int64).self)
        {
            let claimed = claimedXID.flatMap(UInt64.init).flatMap { xid in claimedID.map { Position(xid: xid, id: $0) }
            }
            cursor = (Position(xid: UInt64(xid) ?? 0, id: id), claimed, expired)
        }
        return cursor
    }

    /// The condition on an outbox row of this outbox's partition (empty for a plain consumer):
    /// numbers only.
    var partitionFilter: String {
        guard let partition else { return "" }
        return "AND coalesce(ordering_hash, 0) % \(partition.count) = \(partition.index)"
    }

    /// Claims the next batch after `position` (the claim only moves forward); returns its last row
    /// and its size. A partition's batch that is not full ends at the last row any partition may
    /// read (the horizon): the rows between are other partitions', so the cursor of a partition
    /// that gets few events still moves, and the outbox's cleanup can delete what all have passed.
    /// Throws `leaseLost` when the lease of `epoch` is not this bridge's (nothing claimed), in the
    /// same statement: fenced off is not "nothing to read". Returns the cursor's expired count too
    /// (``DurableClaim/expired``), as the claim's UPDATE returns it: a cleanup that committed while
    /// the claim waited for the cursor's row deleted rows of the batch this statement's snapshot
    /// selected, and counted them there (the snapshot's count would miss them, and the gap they
    /// leave would read as `missed`).
    func claimBatch(after position: Position, limit: Int, epoch: Int64, on connection: PostgresConnection)
        async throws -> (Position, Int, expired: Int)?
    {
        let rows = try await connection.query(
            """
            WITH batch AS (
                SELECT xid, id FROM eventbus_outbox
                WHERE channel = \(channel) AND (xid, id) > (\(String(position.xid))::xid8, \(position.id))
                    AND xid < pg_snapshot_xmin(pg_current_snapshot()) \(unescaped: partitionFilter)
                    AND EXISTS (
                        SELECT 1 FROM eventbus_cursors k
                        WHERE k.channel = \(channel) AND k.consumer = \(settings.consumer)
                            AND k.owner = \(member) AND k.lease_epoch = \(epoch))
                ORDER BY xid, id LIMIT \(limit)),
            horizon AS (
                SELECT xid, id FROM eventbus_outbox
                WHERE \(partition != nil) AND (SELECT count(*) FROM batch) < \(limit)
                    AND channel = \(channel) AND (xid, id) > (\(String(position.xid))::xid8, \(position.id))
                    AND xid < pg_snapshot_xmin(pg_current_snapshot())
                    AND EXISTS (
                        SELECT 1 FROM eventbus_cursors k
                        WHERE k.channel = \(channel) AND k.consumer = \(settings.consumer)
                            AND k.owner = \(member) AND k.lease_epoch = \(epoch))
                ORDER BY xid DESC, id DESC LIMIT 1),
            last AS (
                SELECT xid, id, (SELECT count(*) FROM batch) AS n
                FROM (SELECT xid, id FROM batch UNION ALL SELECT xid, id FROM horizon) AS b
                ORDER BY xid DESC, id DESC LIMIT 1),
            claim AS (
                UPDATE eventbus_cursors c SET claimed_xid = last.xid, claimed_id = last.id FROM last
                WHERE c.channel = \(channel) AND c.consumer = \(settings.consumer) AND c.owner = \(member)
                    AND c.lease_epoch = \(epoch)
                    AND (c.claimed_xid IS NULL OR (c.claimed_xid, c.claimed_id) < (last.xid, last.id))
                RETURNING c.expired)
            SELECT l.xid::text, l.id, l.n, coalesce((SELECT expired FROM claim), k.expired)
            FROM (SELECT 1) AS one LEFT JOIN last l ON true LEFT JOIN eventbus_cursors k
                ON k.channel = \(channel) AND k.consumer = \(settings.consumer)
                    AND k.owner = \(member) AND k.lease_epoch = \(epoch)
            """, logger: logger)
        var last: (Position, Int, expired: Int)?
        var held = false
        for try await (xid, id, count, expired) in rows.decode((String?, Int64?, Int64?, Int64?).self) {
            held = expired != nil
            if let xid, let id, let count {
                last = (Position(xid: UInt64(xid) ?? 0, id: id), Int(count), Int(expired ?? 0))
            }
        }
        // Fenced off (another bridge took the lease, or a reset bumped its epoch): nothing claimed.
        guard held else { throw PostgresEventBridgeError.leaseLost(consumer: settings.consumer) }
        return last
    }

    /// The rows after `position` through `last` (claimed), in order: no transaction can still add
    /// one there (the claim saw every one below the oldest running transaction). The text column
    /// has a name of its own: named `xid`, it was what `ORDER BY xid` sorted, as text, so a batch
    /// crossing a power of ten of transaction ids (999 to 1000) was delivered out of order.
    func readBatch(after position: Position, through last: Position, limit: Int, on connection: PostgresConnection)
        async throws -> [Row]
    {
        // The text of `xid` is named `xid_text`: named `xid`, it is what `ORDER BY xid` sorts (an
        // output column wins over an input column), as text, so "1000" came before "996" and a
        // batch whose xids changed length was delivered out of order (reported as `missed`).
        let rows = try await connection.query(
            """
            SELECT o.id, o.xid::text AS xid_text, o.payload FROM eventbus_outbox o
            WHERE o.channel = \(channel) AND (o.xid, o.id) > (\(String(position.xid))::xid8, \(position.id))
                AND (o.xid, o.id) <= (\(String(last.xid))::xid8, \(last.id)) \(unescaped: partitionFilter)
            ORDER BY o.xid, o.id LIMIT \(limit)
            """, logger: logger)
        var batch: [Row] = []
        batch.reserveCapacity(limit)
        for try await (id, xid, payload) in rows.decode((Int64, String, String).self) {
            batch.append(Row(position: Position(xid: UInt64(xid) ?? 0, id: id), envelope: payload))
        }
        return batch
    }

    /// Moves the cursor to `position`, fenced by the lease of `epoch`, its claim as `update` says
    /// (``DurableCursor/acknowledge(_:claim:epoch:)``); returns the expired count it reset (the
    /// rows retention deleted before this consumer read them, counted since the last
    /// acknowledgement). Throws `leaseLost` when the lease is another's.
    func acknowledgement(
        _ position: Position, claim update: DurableClaimUpdate<Position>, epoch: Int64,
        on connection: PostgresConnection
    ) async throws -> Int {
        // Numbers only (UInt64, Int64): written into the statement; an xid8 is cast from text.
        let at = "('\(position.xid)'::xid8, \(position.id))"
        let claim: String
        switch update {
        case .keep:
            claim = """
                claimed_xid = CASE WHEN (c.claimed_xid, c.claimed_id) > \(at) THEN c.claimed_xid END,
                claimed_id = CASE WHEN (c.claimed_xid, c.claimed_id) > \(at) THEN c.claimed_id END
                """
        case .releaseTo(.some(let kept)) where kept > position:
            claim = "claimed_xid = '\(kept.xid)'::xid8, claimed_id = \(kept.id)"
        case .releaseTo:
            claim = "claimed_xid = NULL, claimed_id = NULL"
        }
        var bindings = PostgresBindings(capacity: 4)
        bindings.append(channel)
        bindings.append(settings.consumer)
        bindings.append(member)
        bindings.append(epoch)
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    WITH old AS (
                        SELECT expired FROM eventbus_cursors
                        WHERE channel = $1 AND consumer = $2 AND owner = $3 AND lease_epoch = $4 FOR UPDATE)
                    UPDATE eventbus_cursors c SET xid = '\(position.xid)'::xid8, id = \(position.id),
                        \(claim),
                        expired = c.expired - old.expired, updated_at = now()
                    FROM old WHERE c.channel = $1 AND c.consumer = $2
                    RETURNING old.expired
                    """, binds: bindings), logger: logger)
        var expired: Int64?
        for try await value in rows.decode(Int64.self) { expired = value }
        // No row: another member took the lease over; this one must not move the cursor.
        guard let expired else { throw PostgresEventBridgeError.leaseLost(consumer: settings.consumer) }
        return Int(expired)
    }

    // MARK: Cleanup

    /// Deletes the rows every consumer of the channel has passed, then those beyond the retention
    /// limits (counted, per consumer whose cursor had not passed them, as expired), except the rows
    /// a consumer has claimed and not acknowledged (at most a batch per consumer: a dead consumer's
    /// batch is redelivered, announced, when it restarts), each in statements of at most
    /// ``cleanupBatch`` rows (short transactions: publishers insert meanwhile, and wait for
    /// nothing); returns how many rows it deleted.
    func cleanUp(_ client: PostgresClient) async throws -> Int {
        try await ensureSchema(client)
        let passed: PostgresQuery = """
            WITH m AS (SELECT xid, id FROM eventbus_cursors WHERE channel = \(channel) ORDER BY xid, id LIMIT 1),
            doomed AS (
                SELECT o.id FROM eventbus_outbox o, m
                WHERE o.channel = \(channel) AND (o.xid, o.id) <= (m.xid, m.id)
                ORDER BY o.xid, o.id LIMIT \(Self.cleanupBatch)),
            gone AS (DELETE FROM eventbus_outbox o USING doomed d WHERE o.id = d.id RETURNING 1)
            SELECT count(*) FROM gone
            """
        var deleted = try await repeatUntilShort(passed, client)
        let count = settings.retentionCount.map { String(max(0, $0)) } ?? "NULL"
        let age = settings.retentionAge.map { String(Int(max(0, $0 / .milliseconds(1)))) } ?? "NULL"
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(channel)
        let retained = PostgresQuery(
            unsafeSQL: """
                WITH bound AS (SELECT greatest(
                    (SELECT max(id) FROM eventbus_outbox WHERE channel = $1) - \(count),
                    (SELECT id FROM eventbus_outbox
                     WHERE channel = $1 AND created_at < now() - \(age) * interval '1 millisecond'
                     ORDER BY created_at DESC LIMIT 1)) AS id),
                doomed AS (
                    SELECT o.id FROM eventbus_outbox o, bound
                    WHERE o.channel = $1 AND o.id <= bound.id
                        AND NOT EXISTS (
                            SELECT 1 FROM eventbus_cursors c
                            WHERE c.channel = $1 AND c.claimed_xid IS NOT NULL AND (o.xid, o.id) > (c.xid, c.id)
                                AND (o.xid, o.id) <= (c.claimed_xid, c.claimed_id))
                    ORDER BY o.id LIMIT \(Self.cleanupBatch)),
                gone AS (
                    DELETE FROM eventbus_outbox o USING doomed d WHERE o.id = d.id
                    RETURNING o.xid, o.id, coalesce(o.ordering_hash, 0) AS hash),
                lost AS (
                    SELECT c.consumer, count(*) AS n FROM eventbus_cursors c JOIN gone g
                        ON (g.xid, g.id) > (c.xid, c.id)
                            AND (c.partitions IS NULL OR g.hash % c.partitions = c.partition)
                    WHERE c.channel = $1 GROUP BY c.consumer),
                counted AS (
                    UPDATE eventbus_cursors c SET expired = c.expired + lost.n FROM lost
                    WHERE c.channel = $1 AND c.consumer = lost.consumer)
                SELECT count(*) FROM gone
                """, binds: bindings)
        deleted += try await repeatUntilShort(retained, client, lockingCursors: true)
        try await cleanUpSchedule(client)
        return deleted
    }

    /// Runs `query` (which deletes at most ``cleanupBatch`` rows and returns how many) until it
    /// deletes fewer, 100 times at most; returns the total. `lockingCursors`: each run in a
    /// transaction that first locks every cursor row of the channel (in consumer order, as every
    /// cleaner does), so that no claim or acknowledgement commits between what the deletion sees
    /// of the cursors and its commit (see ``read(after:on:)``).
    func repeatUntilShort(_ query: PostgresQuery, _ client: PostgresClient, lockingCursors: Bool = false)
        async throws -> Int
    {
        let lock: PostgresQuery = """
            SELECT 1 FROM eventbus_cursors WHERE channel = \(channel) ORDER BY consumer FOR UPDATE
            """
        var total = 0
        for _ in 0..<100 {
            let deleted = try await client.withConnection { connection in
                var deleted = 0
                if lockingCursors { try await connection.query("BEGIN", logger: logger).consume() }
                do {
                    if lockingCursors { try await connection.query(lock, logger: logger).consume() }
                    for try await count in try await connection.query(query, logger: logger).decode(Int64.self) {
                        deleted = Int(count)
                    }
                    if lockingCursors { try await connection.query("COMMIT", logger: logger).consume() }
                } catch {
                    if lockingCursors { try? await connection.query("ROLLBACK", logger: logger).consume() }
                    throw error
                }
                return deleted
            }
            total += deleted
            if deleted < Self.cleanupBatch { break }
        }
        return total
    }
}
