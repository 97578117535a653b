public import EventBusRemote
public import Foundation

/// Operations on the channel's durable consumers: their lag, listing, removing, resetting a cursor.
/// Each call runs on a connection of the bridge's client (the pool), not on the listening
/// connection, and does not need ``PostgresEventBridge/run()``; any bridge of the channel can
/// operate on any of its consumers (an operations tool can make one just for this). At most once
/// there are no consumers: each throws ``PostgresEventBridgeError/operationsNeedDurableDelivery``.
extension PostgresEventBridge {
    /// This bridge's id as a consumer's lease owner, as ``ConsumerLease`` shows it (`nil` at most
    /// once): which of the listed leases is this process's.
    ///
    /// ```swift
    /// let mine = try await cluster.consumers().filter {
    ///     if case .held(cluster.leaseOwnerID, _, _) = $0.lease { true } else { false }
    /// }
    /// ```
    public var leaseOwnerID: UUID? { transport.outbox?.member }

    /// The latest lag of the consumer this bridge reads for, as it last measured it (every
    /// ``Durable/lagInterval``, while it holds the consumer's lease): the same as
    /// `RemoteBridge.lag`, also recorded as the gauges `consumer_lag` and `consumer_lag_seconds`.
    ///
    /// No query: a value in memory (empty until the first measure, and on a bridge that stands by
    /// or runs at most once). Each measure counts at most 100,000 unread rows
    /// (``ConsumerLag/unreadIsExact`` says whether it stopped there); ``consumers()`` counts them
    /// all.
    ///
    /// ```swift
    /// if let lag = cluster.lag.first, lag.oldestUnreadAge ?? .zero > .seconds(60) {
    ///     logger.warning("billing is a minute behind: \(lag)")
    /// }
    /// ```
    public var lag: [ConsumerLag] { remote.lag }

    /// Every durable consumer of the channel, sorted by name, with its exact lag, its lease and its
    /// cursor (a group's partitions are consumers named after their partition, listed together).
    ///
    /// One statement on a connection of the client. Cost: O(consumers + total unread rows): an
    /// index range scan over each consumer's unread rows (`eventbus_outbox (channel, xid, id)`,
    /// plus a heap read each for `created_at`), or a sequential scan of the channel when most rows
    /// are unread; measured 0.33–0.44 s for a consumer 1,000,000 rows behind (PostgreSQL 15,
    /// loopback). For a cheap, periodic figure read ``lag`` (each consumer's own bridge measures
    /// it, counting at most 100,000 rows).
    ///
    /// - Throws: ``PostgresEventBridgeError/operationsNeedDurableDelivery`` at most once; a
    ///   database error (``PostgresEventBridgeError/postgres(message:underlying:)``).
    ///
    /// ```swift
    /// for consumer in try await cluster.consumers() where consumer.unread > 0 {
    ///     logger.info("\(consumer.name): \(consumer.unread) behind, lease \(consumer.lease)")
    /// }
    /// ```
    public func consumers() async throws -> [ConsumerDescription] {
        try await operating { outbox in try await outbox.consumers(client: transport.client) }
    }

    /// The durable consumer named `name` of the channel (as ``consumers()`` describes it), or `nil`
    /// if it has no cursor here. Same cost as ``consumers()`` for that one consumer.
    ///
    /// - Throws: as ``consumers()``.
    ///
    /// ```swift
    /// let billing = try await cluster.consumer(named: "billing-worker")
    /// ```
    public func consumer(named name: String) async throws -> ConsumerDescription? {
        try await operating { outbox in try await outbox.consumers(named: name, client: transport.client).first }
    }

    /// Deletes durable consumer `name`'s cursor: retention no longer waits for it, and it no longer
    /// appears in ``consumers()``. Refused while a running bridge holds its lease
    /// (``ConsumerRemoval/leased(by:until:)``), unless `force`.
    ///
    /// One statement on a connection of the client (it waits for a running cleanup of the
    /// channel, which locks the cursors). A bridge of that name that starts later begins as a new
    /// consumer, after the last committed event. A forced removal of a consumer whose bridge runs
    /// (``ConsumerRemoval/removedWhileLeased(by:until:)``): that bridge finds out at its next
    /// claim, acknowledgement or lease renewal (within a third of ``Durable/leaseDuration``),
    /// reports `BridgeStatus.interrupted` (`leaseLost`) and `.resumed`, makes the cursor again after
    /// the last committed event and goes on as a new consumer, reporting
    /// `BridgeIssue.consumerRemoved(consumer:)`: events it had not read are not delivered to it.
    /// A consumer group's partition (`billing#3`) can be removed by itself: a running member makes
    /// the group's missing cursors again, after the last committed event, at its next coordination
    /// turn (a third of ``Durable/leaseDuration``), and the member that held it reports
    /// `BridgeIssue.consumerRemoved(consumer:)`; with no member running, the next one to start does.
    ///
    /// - Throws: ``PostgresEventBridgeError/operationsNeedDurableDelivery`` at most once; a
    ///   database error. An unknown name is not an error: ``ConsumerRemoval/unknown``.
    ///
    /// ```swift
    /// if case .leased(let owner, _) = try await cluster.removeConsumer("old-worker") {
    ///     logger.warning("old-worker still runs (\(owner)): stop it, or force")
    /// }
    /// ```
    @discardableResult
    public func removeConsumer(_ name: String, force: Bool = false) async throws -> ConsumerRemoval {
        try await operating { outbox in try await outbox.removeConsumer(name, force: force, client: transport.client) }
    }

    /// Deletes the cursors of every partition of consumer group `group` at once (one statement):
    /// the group no longer appears in ``consumers()`` and retention no longer waits for it.
    /// Refused, nothing deleted, while a live bridge holds the lease of any of its partitions
    /// (``ConsumerRemoval/leased(by:until:)`` names one), unless `force`
    /// (``ConsumerRemoval/removedWhileLeased(by:until:)``: each running member loses its partitions
    /// at its next acknowledgement or coordination turn, makes the group's cursors again, after the
    /// last committed event, at that turn, and goes on as a new group, each partition it held
    /// reporting `BridgeIssue.consumerRemoved(consumer:)`). ``ConsumerRemoval/unknown`` when the
    /// channel has no partition of that group.
    ///
    /// One statement on a connection of the client (plus a catalog lookup).
    ///
    /// - Throws: ``PostgresEventBridgeError/operationsNeedDurableDelivery`` at most once; a
    ///   database error.
    ///
    /// ```swift
    /// let partitions = try await cluster.consumers().filter { $0.group == "billing" }.map(\.name)
    /// if try await cluster.removeConsumerGroup("billing") == .removed {
    ///     logger.info("removed \(partitions)")
    /// }
    /// ```
    @discardableResult
    public func removeConsumerGroup(_ group: String, force: Bool = false) async throws -> ConsumerRemoval {
        try await operating { outbox in try await outbox.removeGroup(group, force: force, client: transport.client) }
    }

    /// Moves durable consumer `consumer`'s cursor to `point`: to deliver events again (a replay) or
    /// to skip a backlog. Safe while a bridge reads for the consumer, and announced to it.
    ///
    /// `consumer` may be a consumer group's partition (`billing#3`, as ``consumers()`` lists it):
    /// the counts are then the partition's own events, and the member that holds it replays. A
    /// group's name is not a consumer (``PostgresEventBridgeError/unknownConsumer(_:)``): reset each
    /// of its partitions.
    ///
    /// One transaction on a connection of the client: it locks the consumer's cursor row, finds
    /// the point (``ReplayPoint``), counts the events between the old and the new position (an
    /// index range scan over them), moves the cursor there, drops its claim and **bumps its lease
    /// epoch**. A bridge reading for it (``CursorReset/holder``) is fenced: its next claim,
    /// acknowledgement or renewal fails (a batch it is delivering is not acknowledged), it reports
    /// `BridgeStatus.interrupted` (`leaseLost`) then `.resumed`, takes the lease again and reads
    /// from the new cursor, within a third of ``Durable/leaseDuration`` (1 s by default). Whichever
    /// bridge reads for the consumer next reports `BridgeIssue.cursorReset(consumer:to:again:skipped:)`
    /// on its bus before the first event from the new cursor, so a replay is never silent (again
    /// if it restarts before acknowledging anything). A second reset before the consumer
    /// acknowledged anything counts from where it was before the first.
    ///
    /// - Throws: ``PostgresEventBridgeError/unknownConsumer(_:)`` (no such consumer on the
    ///   channel), ``PostgresEventBridgeError/unknownOutboxRow(_:)`` (``ReplayPoint/row(_:)`` of a
    ///   row the channel does not have), ``PostgresEventBridgeError/operationsNeedDurableDelivery``,
    ///   or a database error; nothing changed then.
    ///
    /// ```swift
    /// let reset = try await cluster.resetCursor(of: "billing-worker", to: .time(Date() - 3_600))
    /// logger.notice("billing-worker replays \(reset.again) events")
    /// ```
    @discardableResult
    public func resetCursor(of consumer: String, to point: ReplayPoint) async throws -> CursorReset {
        try await operating { outbox in try await outbox.resetCursor(of: consumer, to: point, client: transport.client)
        }
    }

    /// Runs `body` with the durable outbox, with PostgreSQL's errors described.
    private func operating<T>(_ body: (DurableOutbox) async throws -> T) async throws -> T {
        guard let outbox = transport.outbox else { throw PostgresEventBridgeError.operationsNeedDurableDelivery }
        do {
            return try await body(outbox)
        } catch let error as PostgresEventBridgeError {
            throw error
        } catch {
            throw PostgresEventBridgeError.describing(error)
        }
    }
}
