import EventBusRemote
import Logging
import PostgresNIO

/// A consumer's lease: one running bridge at a time reads and acknowledges for a consumer name.
///
/// The lease is three columns of the consumer's cursor row: its `owner` (a bridge's
/// ``DurableOutbox/member`` id), `lease_until` (on the database's clock) and `lease_epoch`, which
/// every taking of the lease increments. The holder renews it every third of
/// ``PostgresEventBridge/Durable/leaseDuration`` on a connection of the client's pool, apart from
/// its handlers; every claim and acknowledgement it makes is fenced by `(owner, lease_epoch)`, so
/// a holder that lost the lease (it stalled past `lease_until` and another bridge took over) moves
/// nothing. Another bridge of the same consumer stands by, reported once
/// (`BridgeIssue.standingBy(consumer:)`), and takes the lease when it lapses (a holder killed
/// with `kill -9`: within the lease plus a third of it) or is released (a holder that stops
/// cleanly, after acknowledging its batch: at once, no redelivery).
extension DurableOutbox {
    /// The lease's new epoch if it was free, lapsed or already this bridge's; `nil` if another
    /// bridge holds it.
    func tryLease(for duration: Duration, on connection: PostgresConnection) async throws -> Int64? {
        let rows = try await connection.query(
            """
            UPDATE eventbus_cursors SET owner = \(member), lease_epoch = lease_epoch + 1,
                lease_until = now() + \(Self.milliseconds(duration)) * interval '1 millisecond'
            WHERE channel = \(channel) AND consumer = \(settings.consumer)
                AND (owner IS NULL OR owner = \(member) OR lease_until < now())
            RETURNING lease_epoch
            """, logger: logger)
        var epoch: Int64?
        for try await value in rows.decode(Int64.self) { epoch = value }
        return epoch
    }

    /// One renewal of the lease of `epoch` for `duration`, within a third of the lease (not the
    /// statement timeout, which can be longer than the lease: ``DurableReader/renewLease(_:)``
    /// tries again until the lease would lapse); whether it was still held.
    func renew(_ epoch: Int64, for duration: Duration, client: PostgresClient) async throws -> Bool {
        try await statement(timeout: settings.leaseDuration / 3) {
            try await client.withConnection { connection in
                let rows = try await connection.query(
                    """
                    UPDATE eventbus_cursors
                    SET lease_until = now() + \(Self.milliseconds(duration)) * interval '1 millisecond'
                    WHERE channel = \(channel) AND consumer = \(settings.consumer) AND owner = \(member)
                        AND lease_epoch = \(epoch)
                    RETURNING 1
                    """, logger: logger)
                var renewed = false
                for try await _ in rows.decode(Int32.self) { renewed = true }
                return renewed
            }
        }
    }

    /// Gives the lease of `epoch` up (`nil`: whichever epoch this bridge holds) and wakes the
    /// channel's receivers (a standing-by bridge takes over at once), on a connection of `client`.
    /// ``DurableReader/releaseLease(_:)`` calls it after a clean stop, whose last batch was
    /// acknowledged; a lease not given up lapses.
    func release(_ epoch: Int64?, client: PostgresClient) async throws {
        try await statement {
            try await client.withConnection { connection in
                try await connection.query(
                    """
                    WITH released AS (
                        UPDATE eventbus_cursors SET owner = NULL, lease_until = NULL
                        WHERE channel = \(channel) AND consumer = \(settings.consumer) AND owner = \(member)
                            AND lease_epoch = coalesce(\(epoch), lease_epoch)
                        RETURNING 1)
                    SELECT pg_notify(\(channel), \(Self.wakePayload)) FROM released
                    """, logger: logger
                ).consume()
            }
        }
    }

    /// `duration` in whole milliseconds, at least 1.
    static func milliseconds(_ duration: Duration) -> Int64 {
        max(1, Int64(duration / .milliseconds(1)))
    }
}
