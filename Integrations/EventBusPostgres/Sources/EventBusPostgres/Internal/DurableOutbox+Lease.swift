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
    /// Takes the consumer's lease, standing by (reported once) while another bridge holds it;
    /// returns its epoch and whether this bridge held the lease just before it (a reconnection),
    /// or throws when cancelled or a statement fails.
    func takeLease(on connection: PostgresConnection, _ inbox: RemoteInbox, waker: Waker) async throws -> (
        epoch: Int64, continuing: Bool
    ) {
        var reported = false
        while true {
            try Task.checkCancellation()
            if let epoch = try await statement({ try await tryLease(on: connection) }) {
                return (epoch, tookLease(epoch))
            }
            if !reported {
                reported = true
                logger.info("consumer \(settings.consumer) is leased to another bridge: standing by")
                inbox.standingBy(consumer: settings.consumer)
            }
            // A release wakes the channel's receivers; a lapse is seen at the next try. Every
            // publish wakes them too: tries are 100 ms apart at least, whatever the traffic.
            let tried = ContinuousClock.now
            await waker.wait(atMost: settings.leaseDuration / 3)
            let spacing = .milliseconds(100) - (ContinuousClock.now - tried)
            if spacing > .zero { try await Task.sleep(for: spacing) }
        }
    }

    /// The lease's new epoch if it was free, lapsed or already this bridge's; `nil` if another
    /// bridge holds it.
    private func tryLease(on connection: PostgresConnection) async throws -> Int64? {
        let rows = try await connection.query(
            """
            UPDATE eventbus_cursors SET owner = \(member), lease_epoch = lease_epoch + 1,
                lease_until = now() + \(Self.milliseconds(settings.leaseDuration)) * interval '1 millisecond'
            WHERE channel = \(channel) AND consumer = \(settings.consumer)
                AND (owner IS NULL OR owner = \(member) OR lease_until < now())
            RETURNING lease_epoch
            """, logger: logger)
        var epoch: Int64?
        for try await value in rows.decode(Int64.self) { epoch = value }
        return epoch
    }

    /// Renews the lease of `epoch` every third of the lease's duration, on connections of
    /// `client` (apart from the reader and its handlers), until cancelled; throws `leaseLost` if
    /// another bridge took it (and what a statement throws). A renewal gets a third of the lease
    /// (not the statement timeout, which can be longer than the lease): one that does not complete
    /// in time is tried again at once, until the lease would have lapsed.
    func renewLease(_ epoch: Int64, client: PostgresClient) async throws {
        var renewedAt = ContinuousClock.now
        while true {
            try await Task.sleep(until: renewedAt + settings.leaseDuration / 3)
            let attempt = ContinuousClock.now
            let renewed: Bool
            do {
                renewed = try await renew(epoch, client: client)
            } catch PostgresEventBridgeError.statementTimeout(let limit) {
                guard ContinuousClock.now < renewedAt + settings.leaseDuration else {
                    setEpoch(nil)
                    throw PostgresEventBridgeError.leaseLost(consumer: settings.consumer)
                }
                logger.warning("renewing the lease of consumer \(settings.consumer) took over \(limit): trying again")
                continue
            }
            guard renewed else {
                setEpoch(nil)
                throw PostgresEventBridgeError.leaseLost(consumer: settings.consumer)
            }
            renewedAt = attempt
        }
    }

    /// One renewal of the lease of `epoch`, within a third of the lease; whether it was still held.
    private func renew(_ epoch: Int64, client: PostgresClient) async throws -> Bool {
        try await statement(timeout: settings.leaseDuration / 3) {
            try await client.withConnection { connection in
                let rows = try await connection.query(
                    """
                    UPDATE eventbus_cursors
                    SET lease_until = now() + \(Self.milliseconds(settings.leaseDuration)) * interval '1 millisecond'
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
    /// channel's receivers (a standing-by bridge takes over at once): after a clean stop, whose last
    /// batch was acknowledged. Best effort, on a connection of `client`; a lease not given up lapses.
    func releaseLease(_ epoch: Int64?, client: PostgresClient) async {
        endEpoch(epoch)
        do {
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
        } catch {
            logger.info("releasing the lease of consumer \(settings.consumer) failed (it lapses): \(error)")
        }
    }

    /// `duration` in whole milliseconds, at least 1.
    static func milliseconds(_ duration: Duration) -> Int64 {
        max(1, Int64(duration / .milliseconds(1)))
    }
}
