public import EventBus
public import Foundation
public import Logging
import NIOConcurrencyHelpers
public import PostgresNIO
public import ServiceLifecycle

/// Carries registered events between the app instances that share a PostgreSQL database, over
/// `LISTEN`/`NOTIFY`.
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
/// - **At most once**, nothing persisted. A receiver gets each event at most once; it misses the
///   events published while it is not listening, which ``BridgeStatus`` reports (`.interrupted`,
///   then `.resumed(gap:)`). Every other loss is reported as a ``BridgeIssue``.
/// - **Order.** One serial publisher per bridge: an instance's events reach every receiver in
///   publish order, and all receivers see the events of all instances in one order (PostgreSQL
///   delivers in commit order).
/// - **No echo, no loops.** A bridge ignores its own notifications (except transactional publishes,
///   delivered locally when the echo arrives after COMMIT); only ``publish(_:)`` sends, and received
///   events are dispatched locally only.
/// - **Where handlers run.** Received events, statuses and issues are dispatched with
///   `EventBus.dispatchOnBusQueue(_:)`: synchronous subscribers run on the bus's serial queue, never
///   on a NIO event loop and never under a lock of the bridge.
/// - **Untrusted input.** Any database role can NOTIFY any channel: only registered wire names
///   decode, and foreign, malformed or oversized payloads are reported and skipped.
///
/// > Important: The listening connection must be a direct session: PgBouncer in transaction
/// > pooling mode cannot hold a `LISTEN`. When a loss is unacceptable, write an outbox table in the
/// > same transaction and use this bridge only as the wake-up.
public final class PostgresEventBridge: Service, Sendable {
    /// The largest envelope PostgreSQL accepts as a NOTIFY payload, in UTF-8 bytes: 7,999.
    ///
    /// ```swift
    /// assert(PostgresEventBridge.maximumPayloadBytes == 7_999)
    /// ```
    public static let maximumPayloadBytes = 7_999

    /// The bus received events, statuses and issues are dispatched on.
    public let bus: EventBus

    /// The PostgreSQL channel the bridge listens and publishes on.
    public let channel: String

    /// This bridge's origin id, in every envelope it sends: a random UUID per bridge.
    public let origin: UUID

    /// The timing and capacity settings.
    public let configuration: Configuration

    private let listenConfiguration: PostgresConnection.Configuration
    private let client: PostgresClient
    private let logger: Logger
    private let registry = NIOLockedValueBox(Registry())
    private let publisher: SerialPublisher
    private let duplicates = NIOLockedValueBox(DuplicateWindow())
    /// Whether `run()` is running, and the heartbeats sent and come back.
    private let listenState = NIOLockedValueBox(ListenState())

    private struct ListenState {
        var isRunning = false
        var heartbeatsSent: UInt64 = 0
        var heartbeatsReturned: UInt64 = 0
        var connectionCount = 0
    }

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
    ///   - configuration: Heartbeat, reconnection and buffer settings.
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
        self.bus = bus
        self.channel = channel
        self.origin = UUID()
        self.configuration = configuration
        self.listenConfiguration = listenConfiguration
        self.client = client
        self.logger = logger
        self.publisher = SerialPublisher(capacity: max(1, configuration.publishBufferCapacity))
    }

    // MARK: Registration

    /// Lets events of type `E` cross the bridge under `wireName`, both ways.
    ///
    /// Only registered types are published and decoded: an envelope naming another wire name is
    /// skipped (``BridgeIssue/unknownWireName(_:origin:)``). Choose names that say the version
    /// (`"order.shipped.v1"`) and keep them stable across deployments: the name, not the Swift
    /// type, is the contract. Thread-safe; may be called while the bridge runs.
    ///
    /// A name of 1 to 128 letters, digits, `.`, `-`, `_` or `:` is accepted once per type; an
    /// invalid name, a second name for a type or a name taken by another type is refused and
    /// reported as ``BridgeIssue/registrationRefused(wireName:reason:)`` (registering the same pair
    /// again does nothing).
    ///
    /// ```swift
    /// cluster.register(OrderShipped.self, as: "order.shipped.v1")
    /// ```
    public func register<E: Event & Codable>(_ type: E.Type, as wireName: String) {
        let problem = Names.wireNameProblem(wireName) ?? registry.withLockedValue { $0.add(type, as: wireName) }
        if let problem { report(.registrationRefused(wireName: wireName, reason: problem)) }
    }

    // MARK: Publishing

    /// Dispatches `event` on the local bus now and sends it to the other instances.
    ///
    /// The local dispatch happens at publish time, as `EventBus.dispatch(_:)` does it (synchronous
    /// subscribers run on the calling thread before the NOTIFY is sent); the instance does not
    /// receive its own notification again. The NOTIFY goes through the bridge's serial publisher
    /// (in publish order, batched when publishes queue up) on a connection of `client`; this
    /// returns once it has been sent. Publishing does not need ``run()``.
    ///
    /// Refused, with nothing dispatched or sent and a ``BridgeIssue`` reported: a type that was not
    /// registered, an envelope over ``maximumPayloadBytes``, a full publish buffer. A failed NOTIFY
    /// (after the local dispatch) throws and reports ``BridgeIssue/publishFailed(wireName:sequence:error:)``.
    /// Cancelling the calling task does not withdraw a publish already queued.
    ///
    /// ```swift
    /// try await cluster.publish(OrderShipped(orderID: id))
    /// ```
    public func publish<E: Event & Codable>(_ event: E) async throws {
        let (wireName, payload, keyJSON) = try encode(event)
        let admission = publisher.admit(wireName: wireName) { sequence in
            Envelope.event(
                origin: origin, sequence: sequence, wireName: wireName, keyJSON: keyJSON, transactional: false,
                payload: payload)
        }
        switch admission {
        case .refused(let error, let bytes):
            if case .publishBufferFull(let capacity) = error {
                report(.publishBufferFull(wireName: wireName, capacity: capacity))
            } else {
                report(.payloadTooLarge(wireName: wireName, bytes: bytes))
            }
            throw error
        case .admitted(let ticket, let startsDrain):
            bus.dispatch(event)
            if startsDrain { Task { await self.drainPublishes() } }
            try await ticket.wait()
        }
    }

    /// Sends `event` within the transaction open on `connection`: PostgreSQL delivers it at COMMIT,
    /// and a ROLLBACK delivers it nowhere.
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
        let (wireName, payload, keyJSON) = try encode(event)
        let sequence = publisher.takeSequence()
        let envelope = Envelope.event(
            origin: origin, sequence: sequence, wireName: wireName, keyJSON: keyJSON, transactional: true,
            payload: payload)
        let bytes = envelope.utf8.count
        guard bytes <= Self.maximumPayloadBytes else {
            report(.payloadTooLarge(wireName: wireName, bytes: bytes))
            throw PostgresEventBridgeError.payloadTooLarge(bytes: bytes)
        }
        try await connection.query(notifyQuery([envelope]), logger: logger).consume()
    }

    /// The wire name, payload JSON and key JSON of `event`; runs the event's `Encodable` code, so
    /// never under a lock.
    private func encode<E: Event & Codable>(_ event: E) throws -> (String, String, String?) {
        guard let wireName = registry.withLockedValue({ $0.wireName(of: E.self) }) else {
            throw PostgresEventBridgeError.unregisteredType(E.self)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let payload = String(decoding: try encoder.encode(event), as: UTF8.self)
        let keyJSON = try event.eventType._eventRoutingKey.map {
            String(decoding: try encoder.encode($0), as: UTF8.self)
        }
        return (wireName, payload, keyJSON)
    }

    /// `SELECT pg_notify($1, $2), pg_notify($1, $3), …`: one statement, so one implicit
    /// transaction, delivered in this order.
    private func notifyQuery(_ envelopes: [String]) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: envelopes.count + 1)
        bindings.append(channel)
        var calls: [String] = []
        for (index, envelope) in envelopes.enumerated() {
            bindings.append(envelope)
            calls.append("pg_notify($1, $\(index + 2))")
        }
        return PostgresQuery(unsafeSQL: "SELECT " + calls.joined(separator: ", "), binds: bindings)
    }

    private func drainPublishes() async {
        await publisher.drain(
            send: { jobs in
                try await self.client.query(self.notifyQuery(jobs.map(\.envelope)), logger: self.logger).consume()
            },
            failed: { job, error in
                self.report(.publishFailed(wireName: job.wireName, sequence: job.sequence, error: error))
            }
        )
    }

    // MARK: Listening

    /// Listens on the channel until the task is cancelled or the service group shuts down,
    /// reconnecting after every failure; returns after closing the listening connection.
    ///
    /// Opens a dedicated connection with `listenConfiguration` and sends `LISTEN`. Reports
    /// ``BridgeStatus/listening`` once listening, ``BridgeStatus/interrupted(_:)`` when the
    /// connection fails, is terminated or misses a heartbeat (or cannot be opened), then
    /// ``BridgeStatus/resumed(gap:)`` when listening again; retries with exponential backoff and
    /// jitter (``Configuration``). Every ``Configuration/heartbeatInterval`` the connection
    /// notifies itself; a heartbeat that does not come back within
    /// ``Configuration/heartbeatTimeout`` closes and replaces the connection. On return the
    /// connection is closed and ``BridgeStatus/stopped`` reported.
    ///
    /// Received events are dispatched with `EventBus.dispatchOnBusQueue(_:)`, in the order
    /// PostgreSQL delivered them.
    ///
    /// - Throws: ``PostgresEventBridgeError/alreadyRunning`` if it is already running; nothing
    ///   else (failures are reported as statuses and retried).
    ///
    /// ```swift
    /// let group = ServiceGroup(services: [client, cluster], logger: logger)
    /// try await group.run()
    /// ```
    public func run() async throws {
        let started = listenState.withLockedValue { state in
            defer { state.isRunning = true }
            return !state.isRunning
        }
        guard started else { throw PostgresEventBridgeError.alreadyRunning }
        defer {
            listenState.withLockedValue { $0.isRunning = false }
            report(.stopped)
        }
        await cancelWhenGracefulShutdown { await self.listenUntilCancelled() }
    }

    private func listenUntilCancelled() async {
        var interruptedAt: ContinuousClock.Instant?
        var hasListened = false
        var failedAttempts = 0
        while !Task.isCancelled {
            do {
                try await withListeningConnection {
                    failedAttempts = 0
                    if let since = interruptedAt, hasListened {
                        report(.resumed(gap: since.duration(to: .now)))
                    } else {
                        report(.listening)
                    }
                    interruptedAt = nil
                    hasListened = true
                }
            } catch {
                if Task.isCancelled { break }
                logger.warning("listening on \(channel) failed: \(error)")
                if interruptedAt == nil {
                    interruptedAt = .now
                    report(.interrupted(error))
                }
                failedAttempts += 1
                try? await Task.sleep(for: configuration.delay(beforeAttempt: failedAttempts))
            }
        }
    }

    /// Opens the listening connection, LISTENs, calls `onListening`, then receives while the
    /// heartbeat runs; closes the connection however that ends.
    private func withListeningConnection(onListening: () -> Void) async throws {
        let id = listenState.withLockedValue { state in
            state.connectionCount += 1
            return state.connectionCount
        }
        let connection = try await PostgresConnection.connect(
            configuration: listenConfiguration, id: id, logger: logger)
        do {
            try await connection.listen(on: channel) { notifications in
                onListening()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await self.heartbeat(connection) }
                    group.addTask {
                        try await self.receive(notifications)
                        // The sequence ends without an error when the connection closes under it.
                        if !Task.isCancelled { throw PostgresEventBridgeError.connectionClosed }
                    }
                    defer { group.cancelAll() }
                    try await group.next()
                }
            }
        } catch {
            try? await connection.close()
            throw error
        }
        try? await connection.close()
    }

    /// Sends a heartbeat NOTIFY on the listening connection every interval and throws (after
    /// closing the connection, which ends the notification sequence too) if one does not come back
    /// within the limit.
    private func heartbeat(_ connection: PostgresConnection) async throws {
        while true {
            try await Task.sleep(for: configuration.heartbeatInterval)
            let number = listenState.withLockedValue { state in
                state.heartbeatsSent += 1
                return state.heartbeatsSent
            }
            let query = notifyQuery([Envelope.heartbeat(origin: origin, number: number)])
            // Not awaited: on a dead connection the query may never complete; the timeout decides.
            connection.query(query, logger: logger).whenFailure { [logger] error in
                logger.debug("heartbeat query failed: \(error)")
            }
            try await Task.sleep(for: configuration.heartbeatTimeout)
            let returned = listenState.withLockedValue { $0.heartbeatsReturned >= number }
            if !returned {
                connection.close().whenComplete { _ in }
                throw PostgresEventBridgeError.heartbeatTimeout(configuration.heartbeatTimeout)
            }
        }
    }

    /// Handles each notification, until the sequence ends.
    private func receive(_ notifications: PostgresNotificationSequence) async throws {
        for try await notification in notifications {
            handle(notification.payload)
        }
    }

    /// Classifies one untrusted payload and dispatches, records or reports it. Never traps.
    func handle(_ payload: String) {
        switch Envelope.parse(payload) {
        case .invalid(let reason):
            report(
                .undecodableNotification(
                    reason: reason, bytes: payload.utf8.count, excerpt: String(payload.prefix(80))))
        case .heartbeat(let sender, let number):
            guard sender == origin else { return }  // other instances' heartbeats are not for us
            listenState.withLockedValue { $0.heartbeatsReturned = max($0.heartbeatsReturned, number) }
        case .event(let sender, let sequence, let wireName, let transactional, let data):
            // No echo: our own publishes were dispatched at publish time, except transactional ones.
            if sender == origin && !transactional { return }
            if duplicates.withLockedValue({ $0.isDuplicate(origin: sender, sequence: sequence) }) { return }
            guard let deliver = registry.withLockedValue({ $0.deliver(forWireName: wireName) }) else {
                report(.unknownWireName(wireName, origin: sender))
                return
            }
            do {
                try deliver(data, bus)
            } catch {
                report(.undecodablePayload(wireName: wireName, origin: sender, error: error))
            }
        }
    }

    // MARK: Reports

    private func report(_ status: BridgeStatus) {
        logger.info("channel \(channel): \(status)")
        bus.dispatchOnBusQueue(status)
    }

    private func report(_ issue: BridgeIssue) {
        logger.warning("channel \(channel): \(issue)")
        bus.dispatchOnBusQueue(issue)
    }
}

extension PostgresRowSequence {
    /// Reads the rows to the end, so that the statement (and its NOTIFYs) has completed.
    fileprivate func consume() async throws {
        for try await _ in self {}
    }
}
