public import EventBus
public import PostgresNIO

extension PostgresEventBridge {
    /// Runs `handler` on every event of type `E` this durable consumer reads, **inside the
    /// transaction that moves the consumer's cursor past it**: what the handler writes on the
    /// connection it is given commits exactly when the cursor moves, so each event's effect happens
    /// exactly once, across `kill -9` of the process, lost connections and lease takeovers.
    ///
    /// Per batch the receiver runs `BEGIN`; the handler of each event; the cursor's UPDATE (fenced by the consumer's lease: a bridge that lost it matches no row and
    /// rolls everything back); `COMMIT`. **Then** the batch is dispatched on the bus: subscribers see
    /// an event only once its effect committed, and, for such a consumer, at most once (a process
    /// that dies between the COMMIT and the dispatch does not dispatch that batch again; the
    /// handlers' effects are what is exactly once).
    ///
    /// - The handler runs on the receiver's dedicated connection, one event at a time, in the
    ///   channel's order, off the bus queue and never under a lock of the bridge. It may run more
    ///   than once for an event (a transaction rolled back and run again): only its writes on the
    ///   connection are exactly once. Use only the
    ///   connection it is given for the writes that must be exactly once (a query through another
    ///   connection or the pool is not part of the transaction), and never `BEGIN`, `COMMIT` or
    ///   `ROLLBACK` on it.
    /// - **A handler that throws** rolls its transaction back, and the batch runs again with a
    ///   `SAVEPOINT` around each handler (the first pass has none: two round trips fewer per
    ///   event); there, it has its writes rolled back (`ROLLBACK TO SAVEPOINT`) and is tried again
    ///   after ``Processing/retryDelay`` (doubling), ``Processing/maximumAttempts`` times in all; then the event goes to the dead letters (`eventbus_dead_letters`) in the same
    ///   transaction, reported after the COMMIT as `BridgeIssue.deadLettered(...)`; the consumer
    ///   goes on. List and requeue them with ``deadLetters(consumer:after:limit:)`` and
    ///   ``requeue(_:)``.
    /// - **A handler that kills the process** (or hangs past ``Processing/handlerTimeout``, or loses
    ///   the connection) aborts its transaction. The attempt is counted on the cursor row before the
    ///   transaction began, so it survives; the rows of the dead transaction are then handled one
    ///   per transaction, and the event whose handler died ``Processing/maximumAttempts`` times is
    ///   dead-lettered without being run again (it runs at most `maximumAttempts` + 1 times).
    /// - A transaction lasts at most about ``Processing/maximumTransactionDuration`` plus one
    ///   handler: then it commits what it did and the batch goes on in a new one. While it is open
    ///   it holds back every durable reader of the database (see the README: "Effects exactly once").
    ///
    /// Register `E` (``register(_:as:)``) and its handler before ``run()``: events the consumer
    /// passed before the handler was registered never reach it, and events of a type that is not
    /// registered never decode. Only events of types with a handler run in a transaction's
    /// savepoints; the consumer's other events pass with the batch. A consumer with no handler at
    /// all receives as before (its subscribers before the cursor moves, at least once across a
    /// crash).
    ///
    /// - Throws: ``PostgresEventBridgeError/processingNeedsDurableDelivery`` at most once;
    ///   ``PostgresEventBridgeError/processorAlreadyRegistered(_:)`` for a second handler of `E`.
    ///
    /// ```swift
    /// cluster.register(OrderPlaced.self, as: "order.placed.v1")
    /// try cluster.process(OrderPlaced.self) { order, connection in
    ///     try await connection.query(
    ///         "INSERT INTO invoices (order_id, cents) VALUES (\(order.id), \(order.cents))", logger: logger)
    /// }
    /// ```
    public func process<E: Event & Codable>(
        _ type: E.Type, _ handler: @escaping @Sendable (E, PostgresConnection) async throws -> Void
    ) throws {
        guard let outbox = transport.outbox else { throw PostgresEventBridgeError.processingNeedsDurableDelivery }
        guard outbox.processors.add(type, handler) else {
            throw PostgresEventBridgeError.processorAlreadyRegistered(String(describing: type))
        }
    }
}

extension PostgresEventBridge {
    /// The settings of a durable consumer's transactional handlers (``Durable/processing``,
    /// ``PostgresEventBridge/process(_:_:)``).
    ///
    /// ```swift
    /// var durable = PostgresEventBridge.Durable(consumer: "billing")
    /// durable.processing.maximumAttempts = 5
    /// durable.processing.maximumTransactionDuration = .milliseconds(500)
    /// ```
    public struct Processing: Sendable {
        /// How many times a handler runs on an event before the event goes to the dead letters:
        /// tries within the transaction when it throws (each after a backoff), and transactions that
        /// died while it ran (process killed, connection lost, timeout) when it kills the process.
        /// Default 3; values below 1 count as 1.
        public var maximumAttempts = 3

        /// The backoff before a handler's second try on an event; it doubles before each further
        /// try. The transaction stays open meanwhile, so keep it short. Default 50 ms.
        public var retryDelay: Duration = .milliseconds(50)

        /// After each event, a transaction open for longer than this commits what it did (the cursor
        /// at the last event handled) and the batch goes on in a new transaction. It bounds how long
        /// the consumer holds back other durable readers (each waits for transactions that were
        /// running when an event committed). Default 1 s; a transaction can exceed it by one
        /// handler's run.
        public var maximumTransactionDuration: Duration = .seconds(1)

        /// How long one run of a handler may take: past it, the transaction is abandoned (rolled
        /// back, the connection replaced: ``PostgresEventBridgeError/handlerTimeout(_:)``), which
        /// counts as an attempt. Default 10 s.
        public var handlerTimeout: Duration = .seconds(10)

        /// The defaults.
        ///
        /// ```swift
        /// let processing = PostgresEventBridge.Processing()
        /// ```
        public init() {}
    }
}
