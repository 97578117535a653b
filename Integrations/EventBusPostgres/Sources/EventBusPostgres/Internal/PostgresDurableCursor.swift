import EventBusRemote
import PostgresNIO

/// A consumer's cursor in the PostgreSQL outbox, as ``DurableReader`` reads it: the statements of
/// ``DurableOutbox`` (its row in `eventbus_cursors`, the outbox's rows in `(xid, id)` order), each
/// bounded by the outbox's statement timeout.
///
/// Its claims, reads and acknowledgements run on `connection` (the receiver's listening
/// connection, where a transactional batch's transaction is open) or, when it is `nil`, on a
/// connection of `client`'s pool each; the lease is renewed and released on `client`'s pool,
/// apart from the reader and its handlers.
struct PostgresDurableCursor: DurableCursor {
    let outbox: DurableOutbox
    let connection: PostgresConnection?
    let client: PostgresClient

    var id: DurableConsumerID {
        guard let partition = outbox.partition else { return DurableConsumerID(outbox.settings.consumer) }
        return DurableConsumerID(group: partition.group, partition: partition.index, of: partition.count)
    }

    var leaseLost: any Error { PostgresEventBridgeError.leaseLost(consumer: outbox.settings.consumer) }

    /// The cursor (made after the channel's last committed row if new), with a pending reset's
    /// `again` bound when it kept a claim.
    func open() async throws -> DurableCursorState<DurableOutbox.Position> {
        try await outbox.ensureSchema(client)
        let stored = try await onConnection { connection in
            try await outbox.statement { try await outbox.storedCursor(on: connection) }
        }
        guard let (position, claimed, expired) = stored else { throw PostgresEventBridgeError.connectionClosed }
        var state = DurableCursorState(position: position, claimed: claimed, expired: Int(expired))
        if let claimed, claimed > position {
            state.announced = try await onConnection { connection in
                try await outbox.statement { try await outbox.pendingResetFrom(on: connection) }
            }
        }
        return state
    }

    func takeLease(for duration: Duration) async throws -> Int64? {
        try await onConnection { connection in
            try await outbox.statement { try await outbox.tryLease(for: duration, on: connection) }
        }
    }

    func renewLease(_ epoch: Int64, for duration: Duration) async throws -> Bool {
        try await outbox.renew(epoch, for: duration, client: client)
    }

    func releaseLease(_ epoch: Int64?) async throws {
        try await outbox.release(epoch, client: client)
    }

    func claim(after position: DurableOutbox.Position, limit: Int, epoch: Int64) async throws -> DurableClaim<
        DurableOutbox.Position
    >? {
        let claimed = try await onConnection { connection in
            try await outbox.statement {
                try await outbox.claimBatch(after: position, limit: limit, epoch: epoch, on: connection)
            }
        }
        return claimed.map { DurableClaim(last: $0.0, count: $0.1, expired: $0.expired) }
    }

    func read(after position: DurableOutbox.Position, through last: DurableOutbox.Position, limit: Int) async throws
        -> [DurableEvent<DurableOutbox.Position>]
    {
        try await onConnection { connection in
            try await outbox.statement {
                try await outbox.readBatch(after: position, through: last, limit: limit, on: connection)
            }
        }
    }

    func acknowledge(
        _ position: DurableOutbox.Position, claim: DurableClaimUpdate<DurableOutbox.Position>, epoch: Int64
    ) async throws -> Int {
        try await onConnection { connection in
            try await outbox.statement {
                try await outbox.acknowledgement(position, claim: claim, epoch: epoch, on: connection)
            }
        }
    }

    /// Runs `body` on `connection`, or on one of `client`'s pool.
    private func onConnection<T: Sendable>(_ body: @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        if let connection { return try await body(connection) }
        return try await client.withConnection { try await body($0) }
    }
}
