public import EventBus
public import Foundation
public import PostgresNIO

extension PostgresEventBridge {
    /// The handle of a scheduled event, which ``PostgresEventBridge/cancel(_:)`` takes: a random
    /// UUID, the row's primary key in `eventbus_schedule`. Store it (its `uuid`) to cancel from
    /// another process.
    ///
    /// ```swift
    /// let reminder = try await cluster.publish(PaymentDue(orderID: id), after: .seconds(86_400))
    /// try await db.save(reminderID: reminder.uuid)
    /// // later, anywhere:
    /// _ = try await cluster.cancel(PostgresEventBridge.ScheduledEventID(uuid: storedID))
    /// ```
    public struct ScheduledEventID: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The row's id.
        public let uuid: UUID

        /// The handle of the scheduled event whose id is `uuid`.
        ///
        /// ```swift
        /// let handle = PostgresEventBridge.ScheduledEventID(uuid: storedID)
        /// ```
        public init(uuid: UUID) {
            self.uuid = uuid
        }

        /// The UUID, as text.
        ///
        /// ```swift
        /// logger.info("scheduled \(handle)")
        /// ```
        public var description: String { uuid.uuidString }
    }

    /// What ``PostgresEventBridge/cancel(_:)`` found: whether it won against the firer
    /// (`ScheduledEventCancellation`, shared by every durable store; `.unknown` also when the event
    /// was fired or cancelled longer ago than ``Scheduling/retention``).
    ///
    /// ```swift
    /// switch try await cluster.cancel(reminder) {
    /// case .cancelled: print("will never be delivered")
    /// case .alreadyFired: print("delivered, or being delivered: the firer won")
    /// default: break
    /// }
    /// ```
    public typealias Cancellation = ScheduledEventCancellation

    /// Schedules `event` to be published `delay` from now by the database's clock: a row in
    /// `eventbus_schedule` that a running durable bridge of the channel fires into the outbox
    /// once it is due; returns the handle ``cancel(_:)`` takes. Durable delivery only.
    ///
    /// The event is encoded now, on the calling thread (its `Encodable` code, under no lock), and
    /// sealed (origin, sequence, timestamp, MAC) only when it fires, by the firing bridge. Then it
    /// is delivered like a transactional publish: once to every consumer of the channel, the
    /// firing instance included (from the outbox, on its bus queue), and to no one before it is due
    /// by the database's clock; at most ``Scheduling/pollInterval`` plus one batch's firing time
    /// after, while a bridge of the channel runs with ``Scheduling/firesEvents``. Each event fires
    /// exactly once however many instances fire and whichever of them is killed. Nothing is
    /// dispatched locally now. One INSERT through `client`; nothing is held in memory until it
    /// fires.
    ///
    /// - Throws: ``PostgresEventBridgeError/schedulingNeedsDurableDelivery`` at most once;
    ///   `RemoteBridgeError.unregisteredType(_:)`; `RemoteBridgeError.payloadTooLarge(bytes:limit:)`
    ///   (reported too); a database error (then nothing was scheduled, or, if the connection died
    ///   after the INSERT, it may have been: ``cancel(_:)`` tells).
    ///
    /// ```swift
    /// let reminder = try await cluster.publish(PaymentDue(orderID: id), after: .seconds(86_400))
    /// ```
    @discardableResult
    public func publish<E: Event & Codable>(_ event: E, after delay: Duration) async throws -> ScheduledEventID {
        try await schedule(event, due: .after(delay), in: nil)
    }

    /// Schedules `event` to be published at `date`, compared with the database's clock; otherwise
    /// exactly as ``publish(_:after:)``. A date in the past fires at the firer's next pass.
    ///
    /// ```swift
    /// let handle = try await cluster.publish(SaleStarts(id: sale), at: sale.startDate)
    /// ```
    @discardableResult
    public func publish<E: Event & Codable>(_ event: E, at date: Date) async throws -> ScheduledEventID {
        try await schedule(event, due: .at(date), in: nil)
    }

    /// Schedules `event` `delay` after the INSERT, within the transaction open on `connection`: a
    /// ROLLBACK schedules nothing, and the row is visible to firers from the COMMIT. Otherwise as
    /// ``publish(_:after:)``.
    ///
    /// ```swift
    /// try await client.withTransaction(logger: logger) { connection in
    ///     try await connection.query("INSERT INTO orders …", logger: logger)
    ///     try await cluster.publish(PaymentDue(orderID: id), after: .seconds(86_400), in: connection)
    /// }
    /// ```
    @discardableResult
    public func publish<E: Event & Codable>(_ event: E, after delay: Duration, in connection: PostgresConnection)
        async throws -> ScheduledEventID
    {
        try await schedule(event, due: .after(delay), in: connection)
    }

    /// Schedules `event` at `date` within the transaction open on `connection`; otherwise as
    /// ``publish(_:after:in:)``.
    ///
    /// ```swift
    /// try await client.withTransaction(logger: logger) { connection in
    ///     try await cluster.publish(SaleStarts(id: sale), at: sale.startDate, in: connection)
    /// }
    /// ```
    @discardableResult
    public func publish<E: Event & Codable>(_ event: E, at date: Date, in connection: PostgresConnection)
        async throws -> ScheduledEventID
    {
        try await schedule(event, due: .at(date), in: connection)
    }

    /// Cancels the scheduled event `scheduled` unless a firer took it first, and says who won.
    ///
    /// One UPDATE through `client` (then, if it changed nothing, one SELECT to say why). If a firer
    /// holds the row at that moment, the UPDATE waits for the firer's transaction (at most one
    /// batch's firing time): `.alreadyFired` if it committed, `.cancelled` if it rolled back (a
    /// firer killed mid-transaction). So exactly one of the cancel and the firer wins, and the
    /// answer is final: `.cancelled` means no consumer ever gets the event, `.alreadyFired` that
    /// every consumer does. Works from any instance of the channel, running or not.
    ///
    /// - Throws: ``PostgresEventBridgeError/schedulingNeedsDurableDelivery`` at most once; a
    ///   database error (then it may or may not have cancelled: call again, the answer is then
    ///   `.alreadyCancelled` or final).
    ///
    /// ```swift
    /// if try await cluster.cancel(reminder) == .alreadyFired {
    ///     logger.info("too late: the reminder went out")
    /// }
    /// ```
    public func cancel(_ scheduled: ScheduledEventID) async throws -> Cancellation {
        guard let scheduler = scheduler() else { throw PostgresEventBridgeError.schedulingNeedsDurableDelivery }
        do {
            return try await scheduler.cancel(scheduled.uuid)
        } catch {
            throw PostgresEventBridgeError.describing(error)
        }
    }

    /// Fires now, in durable mode, the channel's scheduled events due by the database's clock plus
    /// `lookingAhead`, in batches of ``Scheduling/batchSize`` until a batch is short; returns how
    /// many rows it took (fired, or refused and marked so). A running bridge does this every
    /// ``Scheduling/pollInterval`` (with ``Scheduling/clockOffset``); call it to fire at a time of
    /// your choosing, or ahead of time in a test. Safe beside running firers: each row fires once.
    /// Returns 0 at most once.
    ///
    /// ```swift
    /// let fired = try await cluster.fireScheduledEvents(lookingAhead: .seconds(3600))
    /// ```
    @discardableResult
    public func fireScheduledEvents(lookingAhead: Duration = .zero) async throws -> Int {
        guard let scheduler = scheduler() else { return 0 }
        do {
            return try await scheduler.fireDue(
                lookingAhead: lookingAhead, batchSize: scheduler.store.base.settings.scheduling.batchSize)
        } catch {
            throw PostgresEventBridgeError.describing(error)
        }
    }

    // MARK: Internal

    /// The scheduler of this bridge's channel (``DurableScheduler``: encoding, sealing, the firing
    /// loop) over the outbox's schedule table; `nil` at most once.
    func scheduler() -> DurableScheduler<PostgresDurableStore>? {
        guard let outbox = transport.outbox else { return nil }
        return DurableScheduler(
            store: PostgresDurableStore(outbox: outbox, client: transport.client), bridge: remote, channel: channel)
    }

    /// Fires due events every poll interval (at once again after a full batch) until cancelled;
    /// failures are logged and retried at the next interval.
    func fireUntilCancelled() async {
        guard let scheduler = scheduler() else { return }
        let settings = scheduler.store.base.settings.scheduling
        await scheduler.fireUntilCancelled(
            every: settings.pollInterval, lookingAhead: settings.clockOffset, batchSize: settings.batchSize
        ) { [logger, channel] error in
            logger.warning(
                "firing the scheduled events of \(channel) failed: \(PostgresEventBridgeError.describing(error))")
        }
    }

    private func schedule<E: Event & Codable>(
        _ event: E, due: DurableDue, in connection: PostgresConnection?
    ) async throws -> ScheduledEventID {
        guard let outbox = transport.outbox, let scheduler = scheduler() else {
            throw PostgresEventBridgeError.schedulingNeedsDurableDelivery
        }
        let id = UUID()
        let pending = try scheduler.pendingEvent(for: event, id: id)
        let query = outbox.scheduleQuery(id: id, due: due, pending: pending)
        do {
            try await outbox.ensureSchema(transport.client)
            if let connection {
                try await connection.query(query, logger: logger).consume()
            } else {
                try await transport.client.query(query, logger: logger).consume()
            }
        } catch {
            throw PostgresEventBridgeError.describing(error)
        }
        return ScheduledEventID(uuid: id)
    }
}
