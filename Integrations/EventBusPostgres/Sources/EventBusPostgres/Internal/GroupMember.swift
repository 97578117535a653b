import EventBusRemote
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// One bridge's membership in a consumer group (``PostgresEventBridge/ConsumerGroup``): which of
/// the group's partitions it leases, and the loop that reads them.
///
/// Each partition is a cursor row of `eventbus_cursors` named `"<group>#<n>"`, read like a plain
/// consumer's (``DurableOutbox``, with the partition's filter) and leased the same way (owner,
/// `lease_until` on the database's clock, `lease_epoch` fencing every claim and acknowledgement).
/// Two tasks share the work:
///
/// - the **coordinator**, on connections of the client's pool, every third of the lease: renews
///   the member's row in `eventbus_group_members` and the leases it holds (apart from the
///   handlers), counts the members alive, and evens the shares out: it takes free or lapsed
///   partitions up to `ceil(partitions / members)` and marks those beyond it to be given up;
/// - the **reader**, on the listening connection: between batches it gives up the marked
///   partitions (their last batch acknowledged: the next holder redelivers nothing), resumes the
///   partitions newly taken (a predecessor's unacknowledged batch announced as redelivered), and
///   reads a few batches of each held partition in turn.
///
/// A member killed with `kill -9` stops renewing: its partitions lapse within the lease and the
/// others take them at their next turn (within the lease plus a third of it). A member that stops
/// cleanly finishes its batch, gives every partition up and leaves the members' table.
final class GroupMember: Sendable {
    let group: PostgresEventBridge.ConsumerGroup
    /// The group's statements run through it (channel, settings, statement timeout, logger).
    private let base: DurableOutbox
    /// One outbox per partition, by index; their states (lease epoch, what was handled) survive
    /// reconnections.
    let partitions: [DurableOutbox]
    private let state = NIOLockedValueBox(State())

    /// A partition's lease as taken: its epoch, and whether this member held it just before.
    struct Lease: Sendable {
        let epoch: Int64
        let continuing: Bool
    }

    private struct State {
        /// The partitions this member leases, by index.
        var held: [Int: Lease] = [:]
        /// Held partitions beyond this member's share, to give up between batches.
        var releasing: Set<Int> = []
        /// Turns in a row this member held no partition (reported as standing by at the second).
        var idleTurns = 0
    }

    /// How many batches of one partition the reader reads before it turns to the next.
    static let batchesPerTurn = 4

    init(group: PostgresEventBridge.ConsumerGroup, base: DurableOutbox) {
        self.group = group
        self.base = base
        partitions = (0..<group.partitions).map { base.partition($0, of: group) }
    }

    private var channel: String { base.channel }
    private var member: UUID { base.member }
    private var logger: Logger { base.logger }
    private var leaseMilliseconds: Int64 { DurableOutbox.milliseconds(base.settings.leaseDuration) }

    // MARK: Starting

    /// Creates the group's missing partition cursors (after the channel's last committed row): all
    /// of them if the group is new, one removed by `removeConsumer("<group>#<n>")` otherwise; throws
    /// if the group exists with another number of partitions or a name clashes with a plain
    /// consumer's cursor.
    func start(on connection: PostgresConnection) async throws {
        try await base.statement { [self] in try await makeMissingPartitions(on: connection) }
        let (stored, rows) = try await base.statement { [self] in
            var result: (Int?, Int) = (nil, 0)
            let rows = try await connection.query(
                """
                SELECT max(partitions), count(*) FROM eventbus_cursors
                WHERE channel = \(channel) AND group_name = \(group.name)
                """, logger: logger)
            for try await (partitions, count) in rows.decode((Int32?, Int64).self) {
                result = (partitions.map(Int.init), Int(count))
            }
            return result
        }
        guard let stored else { throw PostgresEventBridgeError.consumerNameTaken(group.cursorName(0)) }
        guard stored == group.partitions else {
            throw PostgresEventBridgeError.groupPartitionsMismatch(
                group: group.name, stored: stored, configured: group.partitions)
        }
        // A partition cursor that a plain consumer's row took (created before the group).
        if rows != stored { throw PostgresEventBridgeError.consumerNameTaken(group.name + "#…") }
    }

    /// Inserts the cursor of each partition of the group that has none, after the channel's last
    /// committed row, unless the group exists with another number of partitions.
    ///
    /// Each missing partition, not only a new group's: a partition removed by itself
    /// (`removeConsumer("<group>#<n>")`, or the whole group forced while members ran) was made
    /// again by no one, so its events stayed unread while the members ran, and a member starting
    /// afterwards failed (the group's row count short of its partitions read as a plain consumer's
    /// clashing name). ON CONFLICT keeps the partitions that exist, and a plain consumer's row of
    /// that name (``start(on:)`` refuses to run then).
    private func makeMissingPartitions(on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            INSERT INTO eventbus_cursors (channel, consumer, xid, id, group_name, partition, partitions)
            SELECT \(channel), \(group.name) || '#' || p, coalesce(t.xid, '0'::xid8), coalesce(t.id, 0),
                \(group.name), p, \(group.partitions)
            FROM generate_series(0, \(group.partitions) - 1) AS p LEFT JOIN LATERAL (
                SELECT xid, id FROM eventbus_outbox
                WHERE channel = \(channel) AND xid < pg_snapshot_xmin(pg_current_snapshot())
                ORDER BY xid DESC, id DESC LIMIT 1) AS t ON true
            WHERE NOT EXISTS (
                SELECT 1 FROM eventbus_cursors
                WHERE channel = \(channel) AND group_name = \(group.name) AND partitions <> \(group.partitions))
            ON CONFLICT (channel, consumer) DO NOTHING
            """, logger: logger
        ).consume()
    }

    // MARK: Receiving

    /// Coordinates and reads until cancelled (then gives every partition up and leaves) or until a
    /// statement of the reader fails (the connection is then replaced; the leases stay this
    /// member's and are taken again, as continuing, on the next connection).
    func receive(
        on connection: PostgresConnection, into inbox: RemoteInbox, waker: DurableWaker, client: PostgresClient
    )
        async throws
    {
        forgetLeases()
        var failure: (any Error)?
        do {
            // The coordinator (which renews the leases) is a task of its own, not cancelled by a
            // stop but when the reader ends: a stop waits for the batch in progress to be
            // acknowledged, and that batch may take longer than the lease. Cancelled with the stop
            // (as it was), it let the partition's lease lapse meanwhile, another member took it
            // and delivered the batch again (announced as `redelivered`), the stopping member's
            // acknowledgement fenced off: a clean leave that made another member deliver again.
            let coordinator = Task { try await self.coordinate(client, inbox, waker) }
            defer { coordinator.cancel() }
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await coordinator.value }
                tasks.addTask {
                    defer { coordinator.cancel() }
                    try await self.read(on: connection, into: inbox, waker: waker, client: client)
                }
                tasks.addTask { await self.base.measureLag(inbox, client: client, group: self.group.name) }
                defer { tasks.cancelAll() }
                try await tasks.next()
            }
        } catch {
            failure = error
        }
        if Task.isCancelled || failure is CancellationError {
            await Task { await leave(client) }.value
            return
        }
        if let failure { throw failure }
    }

    /// Drops every lease this member knew of (a new connection takes them again).
    private func forgetLeases() {
        let held = state.withLockedValue { state in
            defer { state = State() }
            return Array(state.held.keys)
        }
        for index in held { partitions[index].reading.setEpoch(nil) }
    }

    /// The reader: between batches, gives up the partitions marked, resumes those newly taken,
    /// then reads up to ``batchesPerTurn`` batches of each held partition; waits for a wake-up or
    /// the poll interval when none had more.
    private func read(
        on connection: PostgresConnection, into inbox: RemoteInbox, waker: DurableWaker, client: PostgresClient
    )
        async throws
    {
        // The partitions read, each with the epoch of the lease it was resumed under: a lease lost
        // and taken again (another member may have read meanwhile) is resumed from the stored cursor.
        var active: [Int: (epoch: Int64, progress: DurableOutbox.Progress)] = [:]
        while !Task.isCancelled {
            let (held, releasing) = state.withLockedValue { ($0.held, $0.releasing) }
            for (index, entry) in active where held[index]?.epoch != entry.epoch { active[index] = nil }
            for index in releasing { await giveUp(index, client: client, active: &active) }
            for (index, lease) in held where active[index] == nil && !releasing.contains(index) {
                try await partitions[index].announceOperations(lease.epoch, on: connection, inbox)
                let progress = try await partitions[index].reader(on: connection, client: client).resume(
                    inbox, continuing: lease.continuing)
                active[index] = (lease.epoch, progress)
            }
            var more = false
            for index in active.keys.sorted() {
                guard let (epoch, progress) = active[index] else { continue }
                let (next, hasMore) = try await readTurn(
                    of: index, from: progress, on: connection, client: client, into: inbox)
                active[index] = next.map { (epoch, $0) }
                more = more || hasMore
                if Task.isCancelled { break }
            }
            if !more { await waker.wait(atMost: base.settings.pollInterval) }
        }
    }

    /// Up to ``batchesPerTurn`` batches of partition `index` from `progress`; a lease lost meanwhile
    /// (another member took it) drops the partition. Each batch runs to its acknowledgement even if
    /// the task is cancelled meanwhile (``DurableOutbox/receive(on:into:waker:client:)``).
    private func readTurn(
        of index: Int, from progress: DurableOutbox.Progress, on connection: PostgresConnection,
        client: PostgresClient, into inbox: RemoteInbox
    ) async throws -> (DurableOutbox.Progress?, more: Bool) {
        var progress = progress
        let outbox = partitions[index]
        for _ in 0..<Self.batchesPerTurn {
            let current = progress
            do {
                let (next, more) = try await Task {
                    try await outbox.batch(current, on: connection, client: client, into: inbox)
                }.value
                progress = next
                if !more || Task.isCancelled { return (progress, false) }
            } catch PostgresEventBridgeError.leaseLost {
                logger.info("consumer group \(group.name) lost partition \(index) to another member")
                dropLease(index)
                return (nil, false)
            }
        }
        return (progress, true)
    }

    /// Gives partition `index` up (its last batch is acknowledged: the reader is between batches).
    private func giveUp(
        _ index: Int, client: PostgresClient, active: inout [Int: (epoch: Int64, progress: DurableOutbox.Progress)]
    ) async {
        active[index] = nil
        let lease = state.withLockedValue { state in
            state.releasing.remove(index)
            return state.held.removeValue(forKey: index)
        }
        if let lease { await partitions[index].reader(on: nil, client: client).releaseLease(lease.epoch) }
    }

    /// Forgets partition `index`'s lease (lost to another member).
    private func dropLease(_ index: Int) {
        state.withLockedValue { state in
            state.held[index] = nil
            state.releasing.remove(index)
        }
        partitions[index].reading.setEpoch(nil)
    }

    // MARK: Coordinating

    /// The coordinator: a turn at once, then every third of the lease, until cancelled; a turn that
    /// fails or takes more than a third of the lease is logged and tried again at the next (its
    /// leases lapse if it keeps failing: the reader's acknowledgements then fail, fenced).
    private func coordinate(_ client: PostgresClient, _ inbox: RemoteInbox, _ waker: DurableWaker) async throws {
        while true {
            do {
                try await base.statement(timeout: base.settings.leaseDuration / 3) {
                    try await client.withConnection { try await self.turn(on: $0, inbox, waker) }
                }
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if Task.isCancelled { throw CancellationError() }
                logger.warning("consumer group \(group.name): a coordination turn failed: \(error)")
            }
            try await Task.sleep(for: base.settings.leaseDuration / 3)
        }
    }

    /// One turn: the member's heartbeat, the renewal of its leases, then its share evened out.
    private func turn(on connection: PostgresConnection, _ inbox: RemoteInbox, _ waker: DurableWaker) async throws {
        let (members, cursors) = try await heartbeat(on: connection)
        // A partition removed while the group runs (its cursor deleted) is made again here, after
        // the last committed row, and taken below; its holder announces `consumerRemoved`
        // (``DurableOutbox/announceOperations(_:on:_:)``). Before, no member read it again until
        // one reconnected or restarted: its events stayed unread, unreported.
        if cursors < group.partitions { try await makeMissingPartitions(on: connection) }
        let held = state.withLockedValue { $0.held }
        if !held.isEmpty {
            let renewed = try await renew(held, on: connection)
            for index in held.keys where !renewed.contains(index) {
                logger.info("consumer group \(group.name) lost partition \(index) (its lease lapsed)")
                dropLease(index)
            }
        }
        let share = (group.partitions + members - 1) / members
        let (count, releasing) = state.withLockedValue { ($0.held.count, $0.releasing.count) }
        let wanted = share - (count - releasing)
        if wanted > 0 {
            let taken = try await take(wanted, excluding: Array(held.keys), on: connection)
            if !taken.isEmpty {
                let leases = taken.map { index, epoch in
                    (index, Lease(epoch: epoch, continuing: partitions[index].reading.tookLease(epoch)))
                }
                state.withLockedValue { state in
                    for (index, lease) in leases { state.held[index] = lease }
                }
                waker.wake()
            }
        } else if wanted < 0 {
            state.withLockedValue { state in
                let kept = state.held.keys.filter { !state.releasing.contains($0) }.sorted()
                state.releasing.formUnion(kept.suffix(-wanted))
            }
            waker.wake()
        }
        let standingBy = state.withLockedValue { state in
            state.idleTurns = state.held.isEmpty ? state.idleTurns + 1 : 0
            return state.idleTurns == 2
        }
        if standingBy {
            logger.info("consumer group \(group.name): every partition is leased to other members: standing by")
            inbox.standingBy(consumer: group.name)
        }
    }

    /// Renews this member's row among the group's members (and deletes the rows of members gone
    /// for an hour); returns how many members are alive, this one included, and how many partition
    /// cursors the group has.
    private func heartbeat(on connection: PostgresConnection) async throws -> (members: Int, cursors: Int) {
        let rows = try await connection.query(
            """
            WITH beat AS (
                INSERT INTO eventbus_group_members (channel, group_name, member, alive_until)
                VALUES (\(channel), \(group.name), \(member), now() + \(leaseMilliseconds) * interval '1 millisecond')
                ON CONFLICT (channel, group_name, member) DO UPDATE SET alive_until = excluded.alive_until
                RETURNING 1),
            gone AS (
                DELETE FROM eventbus_group_members
                WHERE channel = \(channel) AND group_name = \(group.name) AND alive_until < now() - interval '1 hour'
                RETURNING 1)
            SELECT count(*),
                (SELECT count(*) FROM eventbus_cursors WHERE channel = \(channel) AND group_name = \(group.name))
            FROM eventbus_group_members
            WHERE channel = \(channel) AND group_name = \(group.name) AND alive_until > now() AND member <> \(member)
            """, logger: logger)
        var (others, cursors) = (0, group.partitions)
        for try await (count, rows) in rows.decode((Int64, Int64).self) { (others, cursors) = (Int(count), Int(rows)) }
        return (others + 1, cursors)
    }

    /// Renews the leases in `held` (each fenced by its epoch); returns the partitions renewed.
    private func renew(_ held: [Int: Lease], on connection: PostgresConnection) async throws -> Set<Int> {
        let entries = held.sorted { $0.key < $1.key }
        let rows = try await connection.query(
            """
            UPDATE eventbus_cursors c SET lease_until = now() + \(leaseMilliseconds) * interval '1 millisecond'
            FROM unnest(\(entries.map { Int32($0.key) })::int4[], \(entries.map(\.value.epoch))::int8[]) AS h(partition, epoch)
            WHERE c.channel = \(channel) AND c.group_name = \(group.name) AND c.partition = h.partition
                AND c.owner = \(member) AND c.lease_epoch = h.epoch
            RETURNING c.partition
            """, logger: logger)
        var renewed = Set<Int>()
        for try await index in rows.decode(Int32.self) { renewed.insert(Int(index)) }
        return renewed
    }

    /// Takes up to `count` partitions that are free, lapsed or still this member's (after a
    /// reconnection), lowest first, skipping those another member is taking; returns their indexes
    /// and new epochs.
    private func take(_ count: Int, excluding held: [Int], on connection: PostgresConnection) async throws -> [(
        Int, Int64
    )] {
        let rows = try await connection.query(
            """
            WITH free AS (
                SELECT consumer FROM eventbus_cursors
                WHERE channel = \(channel) AND group_name = \(group.name)
                    AND (owner IS NULL OR owner = \(member) OR lease_until < now())
                    AND NOT (partition = ANY(\(held.map(Int32.init))::int4[]))
                ORDER BY partition LIMIT \(count) FOR UPDATE SKIP LOCKED)
            UPDATE eventbus_cursors c SET owner = \(member), lease_epoch = c.lease_epoch + 1,
                lease_until = now() + \(leaseMilliseconds) * interval '1 millisecond'
            FROM free WHERE c.channel = \(channel) AND c.consumer = free.consumer
            RETURNING c.partition, c.lease_epoch
            """, logger: logger)
        var taken: [(Int, Int64)] = []
        for try await (index, epoch) in rows.decode((Int32, Int64).self) { taken.append((Int(index), epoch)) }
        return taken
    }

    /// Gives every partition up and leaves the members' table, then wakes the channel's receivers:
    /// after a clean stop, whose last batch was acknowledged. Best effort; what is not given up
    /// lapses.
    private func leave(_ client: PostgresClient) async {
        let held = state.withLockedValue { state in
            defer { state = State() }
            return state.held
        }
        for index in held.keys { partitions[index].reading.setEpoch(nil) }
        let entries = held.sorted { $0.key < $1.key }
        do {
            try await base.statement { [self] in
                try await client.withConnection { connection in
                    try await connection.query(
                        """
                        WITH released AS (
                            UPDATE eventbus_cursors c SET owner = NULL, lease_until = NULL
                            FROM unnest(\(entries.map { Int32($0.key) })::int4[], \(entries.map(\.value.epoch))::int8[])
                                AS h(partition, epoch)
                            WHERE c.channel = \(channel) AND c.group_name = \(group.name) AND c.partition = h.partition
                                AND c.owner = \(member) AND c.lease_epoch = h.epoch
                            RETURNING 1),
                        gone AS (
                            DELETE FROM eventbus_group_members
                            WHERE channel = \(channel) AND group_name = \(group.name) AND member = \(member)
                            RETURNING 1)
                        SELECT pg_notify(\(channel), \(DurableOutbox.wakePayload))
                        """, logger: logger
                    ).consume()
                }
            }
        } catch {
            logger.info("consumer group \(group.name): leaving failed (its leases lapse): \(error)")
        }
    }
}
