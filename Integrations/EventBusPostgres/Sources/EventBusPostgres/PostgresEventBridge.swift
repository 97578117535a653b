public import EventBus
@_exported public import EventBusRemote
public import Foundation
public import Logging
public import PostgresNIO
public import ServiceLifecycle

/// Carries registered events between the app instances that share a PostgreSQL database, over
/// `LISTEN`/`NOTIFY`: the PostgreSQL transport of an EventBusRemote `RemoteBridge`, which does the
/// envelopes, integrity, duplicates and loss accounting (its types, ``BridgeStatus`` and
/// ``BridgeIssue`` among them, come with this module).
///
/// Each instance makes one bridge per channel, registers the `Codable` events it exchanges under
/// explicit wire names, runs the bridge (a swift-service-lifecycle `Service`) and publishes through
/// it. Events other instances publish are dispatched on the local bus as if dispatched there.
///
/// ```swift
/// struct OrderShipped: Event, Codable { let orderID: UUID }
///
/// let cluster = try PostgresEventBridge(
///     bus: .shared, listenConfiguration: config, client: client, channel: "app_events")
/// cluster.register(OrderShipped.self, as: "order.shipped.v1")
/// // in a ServiceGroup with the client, or: Task { try await cluster.run() }
/// try await cluster.publish(OrderShipped(orderID: id))          // local dispatch now + NOTIFY
/// try await client.withTransaction { connection in
///     try await cluster.publish(OrderShipped(orderID: id), in: connection)   // sent at COMMIT
/// }
/// ```
///
/// ## Guarantees
///
/// - **At most once** (the default), nothing persisted. A receiver gets each event at most once; it
///   misses the events published while it is not listening, which ``BridgeStatus`` reports
///   (`.interrupted`, then `.resumed(gap:)`), and each origin's next event says how many of its
///   events were missed (`BridgeIssue.missed(origin:count:before:)`). Every other loss, and every
///   dropped duplicate, is reported as a ``BridgeIssue``.
/// - **Durable** (``Configuration/delivery`` `= .durable(…)`): events are rows of an outbox table,
///   and each consumer reads them after its cursor, across outages and restarts: every committed
///   event is delivered once to each consumer (its synchronous subscribers have run before the
///   cursor moves), except one batch after the consumer's process died mid-batch
///   (`BridgeIssue.redelivered(consumer:count:)`) and what the retention limits deleted unread
///   (`BridgeIssue.expired(consumer:count:)`). One running bridge per consumer name reads (a lease,
///   ``Durable/leaseDuration``); another of the same name stands by
///   (`BridgeIssue.standingBy(consumer:)`) and takes over; to share the work instead, the bridges
///   join a consumer group (``Durable/init(group:partitions:)``: each event to one member, in order
///   per key). A row this instance cannot decode (a
///   version it does not read) is never acknowledged (`BridgeIssue.held(consumer:reason:)`). See the
///   package README.
/// - **Effects exactly once** (durable only): a handler registered with ``process(_:_:)`` runs in
///   the transaction that moves the consumer's cursor, so its writes commit exactly when the cursor
///   moves; an event it keeps failing on goes to a dead-letter table after bounded tries
///   (`BridgeIssue.deadLettered(consumer:wireName:letter:attempts:reason:)`), listed by
///   ``deadLetters(consumer:after:limit:)`` and requeued by ``requeue(_:)``.
/// - **Scheduled events** (durable only): ``publish(_:after:)`` and ``publish(_:at:)`` store the
///   event in a schedule table; running durable bridges fire it into the outbox when it is due by
///   the database's clock, exactly once across instances and kills, sealed by the firing bridge;
///   ``cancel(_:)`` says whether it cancelled or the firer won.
/// - **Order.** One serial publisher per bridge: an instance's events reach every receiver in
///   publish order, and all receivers see the events of all instances in one order (PostgreSQL
///   delivers in commit order).
/// - **No echo, no loops.** A bridge ignores its own notifications (except transactional publishes,
///   delivered locally when the echo arrives after COMMIT); only ``publish(_:)`` sends, and received
///   events are dispatched locally only. A notification that claims this bridge's origin but was
///   not sent by it is reported, never taken for an echo.
/// - **Where handlers run.** Received events, statuses and issues are dispatched with
///   `EventBus.dispatchOnBusQueue(_:)`: synchronous subscribers run on the bus's serial queue, never
///   on a NIO event loop and never under a lock of the bridge.
/// - **Untrusted input.** Any database role can NOTIFY any channel: only registered wire names
///   decode, foreign, malformed or oversized payloads are reported and skipped, and an (origin,
///   sequence) is recorded only once its envelope has authenticated and decoded. With a key, a
///   NOTIFY replaying a recorded envelope to an instance restarted since is refused
///   (`BridgeIssue.stale(origin:sequence:reason:)`); a durable receiver takes events only from the
///   outbox (an event NOTIFYed to it is refused: `BridgeIssue.notFromStore(origin:sequence:)`).
///
/// > Important: Without ``Configuration/authenticationKey``, any role that can `NOTIFY` on the
/// > channel can forge events under any origin and suppress an instance's real events (by
/// > sending its next sequence numbers first); the suppression is reported, not prevented. With a
/// > key shared by the instances, envelopes carry an HMAC-SHA256 and unauthenticated ones are
/// > refused.
///
/// > Important: The listening connection must be a direct session: PgBouncer in transaction
/// > pooling mode cannot hold a `LISTEN`. When a loss is unacceptable, use durable delivery.
public final class PostgresEventBridge: Service, Sendable {
    /// The largest envelope PostgreSQL accepts as a NOTIFY payload, in UTF-8 bytes: 7,999.
    ///
    /// ```swift
    /// assert(PostgresEventBridge.maximumPayloadBytes == 7_999)
    /// ```
    public static let maximumPayloadBytes = 7_999

    /// The statements that create durable delivery's tables (`eventbus_outbox`, `eventbus_cursors`,
    /// `eventbus_schedule` for scheduled events, `eventbus_group_members` for consumer groups and
    /// `eventbus_dead_letters` for transactional handlers, added to a database that has only the
    /// first two the same way, with the columns later versions added) and indexes, each `IF NOT
    /// EXISTS`. A durable bridge runs them itself, under an advisory
    /// lock, once per process before it first publishes or receives; run them yourself (in a
    /// migration) when the app's role may not create tables.
    ///
    /// ```swift
    /// for statement in PostgresEventBridge.durableSchema {
    ///     try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
    /// }
    /// ```
    public static var durableSchema: [String] { DurableOutbox.schema }

    /// The bus received events, statuses and issues are dispatched on.
    public var bus: EventBus { remote.bus }

    /// The PostgreSQL channel the bridge listens and publishes on.
    public let channel: String

    /// This bridge's origin id, in every envelope it sends: a random UUID per bridge.
    public var origin: UUID { remote.origin }

    /// The timing, capacity and integrity settings.
    public let configuration: Configuration

    /// The transport-independent bridge this one is the PostgreSQL transport of.
    public let remote: RemoteBridge

    let transport: PostgresTransport
    let logger: Logger

    /// Makes a bridge on `channel`; nothing is opened until ``run()``.
    ///
    /// - Parameters:
    ///   - bus: Where received events, ``BridgeStatus`` and ``BridgeIssue`` are dispatched, and where
    ///     ``publish(_:)`` dispatches locally.
    ///   - listenConfiguration: How to open the dedicated listening connection. Point it at the
    ///     database directly, not through a transaction-pooling proxy.
    ///   - client: The pool ``publish(_:)`` sends its NOTIFYs through; run it yourself (for
    ///     example in the same `ServiceGroup`).
    ///   - channel: A lowercase identifier of 1 to 63 bytes (`[a-z_][a-z0-9_]*`), the same on every
    ///     instance.
    ///   - configuration: Heartbeat, reconnection, buffer and key settings.
    ///   - logger: Where the bridge and its connection log; silent by default (statuses and issues
    ///     are on the bus).
    /// - Throws: ``PostgresEventBridgeError/invalidChannelName(_:)``.
    ///
    /// ```swift
    /// let config = PostgresConnection.Configuration(
    ///     host: "127.0.0.1", username: "app", password: nil, database: "app", tls: .disable)
    /// let cluster = try PostgresEventBridge(
    ///     bus: .shared, listenConfiguration: config, client: client, channel: "app_events")
    /// ```
    public init(
        bus: EventBus = .shared,
        listenConfiguration: PostgresConnection.Configuration,
        client: PostgresClient,
        channel: String,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "EventBusPostgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        guard Names.isValidChannel(channel) else { throw PostgresEventBridgeError.invalidChannelName(channel) }
        if case .durable(let durable) = configuration.delivery {
            if let group = durable.group, !group.isValid {
                throw PostgresEventBridgeError.invalidGroup(name: group.name, partitions: group.partitions)
            }
            if !(1...200).contains(durable.consumer.utf8.count) {
                throw PostgresEventBridgeError.invalidConsumerName(durable.consumer)
            }
        }
        self.channel = channel
        self.configuration = configuration
        self.logger = logger
        transport = PostgresTransport(
            channel: channel, listenConfiguration: listenConfiguration, client: client, configuration: configuration,
            logger: logger)
        var settings = RemoteBridge.Configuration()
        settings.publishBufferCapacity = configuration.publishBufferCapacity
        settings.publishTimeout = configuration.publishTimeout
        settings.authenticationKey = configuration.authenticationKey
        settings.maximumClockSkew = configuration.maximumClockSkew
        settings.maximumEnvelopeAge = configuration.maximumEnvelopeAge
        settings.previousEnvelopeVersion = configuration.previousEnvelopeVersion
        remote = RemoteBridge(bus: bus, transport: transport, configuration: settings)
    }

    // MARK: Registration

    /// Lets events of type `E` cross the bridge under `wireName`, both ways.
    ///
    /// Only registered types are published and decoded: an envelope naming another wire name is
    /// skipped (`BridgeIssue.unknownWireName(_:origin:)`). Choose names that say the version
    /// (`"order.shipped.v1"`) and keep them stable across deployments: the name, not the Swift
    /// type, is the contract. Thread-safe; may be called while the bridge runs. The same as
    /// `RemoteBridge.register(_:as:)`.
    ///
    /// ```swift
    /// cluster.register(OrderShipped.self, as: "order.shipped.v1")
    /// ```
    public func register<E: Event & Codable>(_ type: E.Type, as wireName: String) {
        remote.register(type, as: wireName)
    }

    /// Lets events of type `E` cross the bridge as version `version` of `wireName`, reading the
    /// older versions `upcasting` names and publishing version `publishing` (by default
    /// `version`): the same as `RemoteBridge.register(_:as:version:upcasting:publishing:)`, which
    /// describes the wire names and the rolling upgrade (see also the README's "Rolling upgrades").
    ///
    /// Durable, a row of a version this instance does not read is never acknowledged: the consumer
    /// holds before it (`BridgeIssue.held(consumer:reason:)`) until an instance that reads it takes
    /// over. Thread-safe; may be called while the bridge runs.
    ///
    /// ```swift
    /// cluster.register(
    ///     OrderShipped.self, as: "order.shipped", version: 2,
    ///     upcasting: [
    ///         .from(OrderShippedV1.self, version: 1,
    ///               upcast: { OrderShipped(orderID: $0.orderID, carrier: nil) },
    ///               downcast: { OrderShippedV1(orderID: $0.orderID) })
    ///     ],
    ///     publishing: 1)   // until every instance reads version 2
    /// ```
    public func register<E: Event & Codable>(
        _ type: E.Type, as wireName: String, version: Int, upcasting: [RemoteBridge.Upcaster<E>] = [],
        publishing: Int? = nil
    ) {
        remote.register(type, as: wireName, version: version, upcasting: upcasting, publishing: publishing)
    }

    // MARK: Publishing

    /// Dispatches `event` on the local bus now and sends it to the other instances (durable: inserts
    /// it into the outbox and wakes them, in the same single statement per batch).
    ///
    /// The local dispatch happens at publish time, as `EventBus.dispatch(_:)` does it (synchronous
    /// subscribers run on the calling thread before the NOTIFY is sent); the instance does not
    /// receive its own notification again. The NOTIFY goes through the bridge's serial publisher
    /// (in publish order, batched when publishes queue up) on a connection of `client`; this
    /// returns once it has been sent, or throws after ``Configuration/publishTimeout`` at the
    /// latest. Publishing does not need ``run()``.
    ///
    /// Refused, with nothing dispatched or sent and a ``BridgeIssue`` reported: a type that was not
    /// registered, an envelope over ``maximumPayloadBytes``, a full publish buffer
    /// (`RemoteBridgeError`). A failed NOTIFY, or one not confirmed within the timeout
    /// (`RemoteBridgeError.publishTimedOut(after:)`), throws after the local dispatch and reports
    /// `BridgeIssue.publishFailed(wireName:sequence:error:)`: the event may not have reached other
    /// instances. Cancelling the calling task does not withdraw a publish already queued.
    ///
    /// ```swift
    /// try await cluster.publish(OrderShipped(orderID: id))
    /// ```
    public func publish<E: Event & Codable>(_ event: E) async throws {
        try await remote.publish(event)
    }

    /// Sends `event` within the transaction open on `connection`: PostgreSQL delivers it at COMMIT,
    /// and a ROLLBACK delivers it nowhere. Durable: its outbox row is inserted in that transaction.
    ///
    /// Nothing is dispatched locally now: this instance delivers the event when its own
    /// notification comes back after the COMMIT (on the bus queue, like received events), so that a
    /// rolled-back event is never seen anywhere. That local delivery therefore needs ``run()``, and
    /// is lost, like any receiver's, while the bridge is not listening. Two identical events in one
    /// transaction are both delivered (each envelope has its own sequence number). The order
    /// relative to ``publish(_:)`` is the commit order. Same refusals as ``publish(_:)``, except the
    /// buffer: this bypasses the serial publisher.
    ///
    /// ```swift
    /// try await client.withTransaction { connection in
    ///     try await connection.query("UPDATE orders SET shipped = true WHERE id = \(id)")
    ///     try await cluster.publish(OrderShipped(orderID: id), in: connection)
    /// }
    /// ```
    public func publish<E: Event & Codable>(_ event: E, in connection: PostgresConnection) async throws {
        let envelope = try remote.transactionalEnvelope(for: event)
        try await connection.query(transport.publishQuery([envelope]), logger: logger).consume()
    }

    // MARK: Durable delivery

    /// Deletes now, in durable mode, the outbox rows of the channel that every consumer has
    /// handled, then those beyond the retention limits (``Durable/retentionAge``,
    /// ``Durable/retentionCount``); returns how many rows it deleted. A running bridge does this
    /// every ``Durable/cleanupInterval``; call it to clean at a time of your choosing.
    ///
    /// Each statement deletes at most 1,000 rows, in a transaction of its own, through `client`:
    /// publishers insert meanwhile without waiting. A consumer whose cursor had not passed a row
    /// deleted for the limits reports `BridgeIssue.expired(consumer:count:)` at its next batch. A
    /// consumer's claimed, unacknowledged batch is never deleted: a consumer killed mid-batch gets
    /// it again when it restarts (`BridgeIssue.redelivered(consumer:count:)`). Does
    /// nothing and returns 0 at most once. Cost: O(rows deleted × consumers of the channel), plus an
    /// index lookup per statement; at most 100 statements per kind per call.
    ///
    /// ```swift
    /// let deleted = try await cluster.cleanUpOutbox()
    /// ```
    @discardableResult
    public func cleanUpOutbox() async throws -> Int {
        guard let outbox = transport.outbox else { return 0 }
        do {
            return try await outbox.cleanUp(transport.client)
        } catch {
            throw PostgresEventBridgeError.describing(error)
        }
    }

    // MARK: Listening

    /// Listens on the channel until the task is cancelled or the service group shuts down,
    /// reconnecting after every failure; returns after closing the listening connection.
    ///
    /// Opens a dedicated connection with `listenConfiguration` and sends `LISTEN`. Reports
    /// ``BridgeStatus/listening`` once listening, ``BridgeStatus/interrupted(_:)`` when the
    /// connection fails, is terminated or misses a heartbeat (or cannot be opened), then
    /// ``BridgeStatus/resumed(gap:)`` when listening again; retries with exponential backoff and
    /// jitter, at most ``Configuration/maximumReconnectDelay`` (500 ms) apart, so that it listens
    /// again within about that of the server accepting connections. Errors carry PostgreSQL's own
    /// message (``PostgresEventBridgeError/postgres(message:underlying:)``). Every ``Configuration/heartbeatInterval`` the connection
    /// notifies itself; a heartbeat that does not come back within
    /// ``Configuration/heartbeatTimeout`` closes and replaces the connection. On return the
    /// connection is closed and ``BridgeStatus/stopped`` reported.
    ///
    /// Received events are dispatched with `EventBus.dispatchOnBusQueue(_:)`, in the order
    /// PostgreSQL delivered them. Durable, it also fires the channel's due scheduled events
    /// (``publish(_:after:)``) every ``Scheduling/pollInterval`` on connections of `client`, unless
    /// ``Scheduling/firesEvents`` is off; a failed pass is logged and retried at the next interval.
    ///
    /// - Throws: `RemoteBridgeError.alreadyRunning` if it is already running; nothing else
    ///   (failures are reported as statuses and retried).
    ///
    /// ```swift
    /// let group = ServiceGroup(services: [client, cluster], logger: logger)
    /// try await group.run()
    /// ```
    public func run() async throws {
        guard let outbox = transport.outbox, outbox.settings.scheduling.firesEvents else {
            return try await cancelWhenGracefulShutdown { try await self.remote.run() }
        }
        try await cancelWhenGracefulShutdown { try await self.receiveAndFire() }
    }

    /// Durable: receives and fires the scheduled events beside it, until the receiving ends.
    private func receiveAndFire() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.remote.run() }
            group.addTask { await self.fireUntilCancelled() }
            defer { group.cancelAll() }
            try await group.next()
        }
    }
}
