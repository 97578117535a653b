import EventBusRemote
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// LISTEN/NOTIFY as a ``RemoteTransport``: sends through the client's pool, receives on a dedicated
/// connection that it reconnects with backoff and checks with heartbeats. Everything about
/// envelopes, integrity, duplicates and losses is EventBusRemote's.
struct PostgresTransport: RemoteTransport {
    let channel: String
    let listenConfiguration: PostgresConnection.Configuration
    let client: PostgresClient
    let configuration: PostgresEventBridge.Configuration
    let logger: Logger
    /// The heartbeats come back and the connections opened, across reconnections.
    private let listenState = NIOLockedValueBox(ListenState())

    private struct ListenState {
        var heartbeatsReturned: UInt64 = 0
        var connectionCount = 0
    }

    init(
        channel: String, listenConfiguration: PostgresConnection.Configuration, client: PostgresClient,
        configuration: PostgresEventBridge.Configuration, logger: Logger
    ) {
        self.channel = channel
        self.listenConfiguration = listenConfiguration
        self.client = client
        self.configuration = configuration
        self.logger = logger
        if case .durable(let settings) = configuration.delivery {
            outbox = DurableOutbox(
                channel: channel, settings: settings, statementTimeout: configuration.heartbeatTimeout, logger: logger)
        } else {
            outbox = nil
        }
    }

    var maximumPayloadBytes: Int { PostgresEventBridge.maximumPayloadBytes }

    /// The outbox of durable delivery; `nil` at most once.
    let outbox: DurableOutbox?

    func send(_ payloads: [String]) async throws {
        do {
            if let outbox {
                // Durable: the same statement every time, prepared once per connection.
                try await outbox.ensureSchema(client)
                for try await _ in try await client.execute(outbox.insert(payloads), logger: logger) {}
            } else {
                try await client.query(try await publishQuery(payloads), logger: logger).consume()
            }
        } catch {
            throw PostgresEventBridgeError.describing(error)
        }
    }

    /// The statement that publishes `envelopes`: their NOTIFYs, or, durable, their outbox rows and
    /// one wake-up NOTIFY (the schema is created first, once per process).
    func publishQuery(_ envelopes: [String]) async throws -> PostgresQuery {
        guard let outbox else { return notifyQuery(envelopes) }
        try await outbox.ensureSchema(client)
        return outbox.insertQuery(envelopes)
    }

    /// `SELECT pg_notify($1, $2), pg_notify($1, $3), …`: one statement, so one implicit
    /// transaction, delivered in this order.
    func notifyQuery(_ envelopes: [String]) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: envelopes.count + 1)
        bindings.append(channel)
        var calls: [String] = []
        for (index, envelope) in envelopes.enumerated() {
            bindings.append(envelope)
            calls.append("pg_notify($1, $\(index + 2))")
        }
        return PostgresQuery(unsafeSQL: "SELECT " + calls.joined(separator: ", "), binds: bindings)
    }

    /// Listens until the task is cancelled, reconnecting after every failure with exponential
    /// backoff and jitter, capped at ``PostgresEventBridge/Configuration/maximumReconnectDelay``
    /// (500 ms by default, so that listening resumes within about that of the server accepting
    /// connections again) and reset once listening.
    func receive(into inbox: RemoteInbox) async throws {
        guard let outbox else { return try await listen(into: inbox) }
        // Durable: the outbox is cleaned beside the receiving, on the client's connections.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await listen(into: inbox) }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: outbox.settings.cleanupInterval)
                    if Task.isCancelled { break }
                    do {
                        _ = try await outbox.cleanUp(client)
                    } catch {
                        let error = PostgresEventBridgeError.describing(error)
                        logger.warning("cleaning the outbox of \(channel) failed: \(error)")
                    }
                }
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Listens (and, durable, reads the outbox) until cancelled, reconnecting after failures.
    private func listen(into inbox: RemoteInbox) async throws {
        var failedAttempts = 0
        while !Task.isCancelled {
            do {
                try await withListeningConnection(inbox) {
                    failedAttempts = 0
                    inbox.listening()
                }
            } catch {
                if Task.isCancelled { break }
                let error = PostgresEventBridgeError.describing(error)
                logger.warning("listening on \(channel) failed: \(error)")
                inbox.interrupted(error)
                failedAttempts += 1
                try? await Task.sleep(for: configuration.delay(beforeAttempt: failedAttempts))
            }
        }
    }

    /// Opens the listening connection, LISTENs, calls `onListening`, then receives while the
    /// heartbeat runs; closes the connection however that ends.
    private func withListeningConnection(_ inbox: RemoteInbox, onListening: () -> Void) async throws {
        let id = listenState.withLockedValue { state in
            state.connectionCount += 1
            return state.connectionCount
        }
        let connection = try await PostgresConnection.connect(
            configuration: listenConfiguration, id: id, logger: logger)
        do {
            try await connection.listen(on: channel) { notifications in
                // Durable: listening already, so no wake-up is missed between reading and waiting;
                // the cursor exists before the bridge says it listens.
                try await outbox?.start(on: connection)
                onListening()
                let waker = DurableWaker()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await self.heartbeat(connection, inbox) }
                    if let outbox {
                        group.addTask {
                            try await outbox.receive(on: connection, into: inbox, waker: waker, client: client)
                        }
                    }
                    group.addTask {
                        for try await notification in notifications {
                            let delivery: RemoteInbox.Delivery
                            if outbox == nil {
                                delivery = inbox.deliver(notification.payload)
                            } else if notification.payload == DurableOutbox.wakePayload {
                                waker.wake()
                                continue
                            } else {
                                // Durable: events come only from the outbox; a NOTIFY only wakes
                                // (or is a heartbeat), and an event envelope on it is refused.
                                delivery = inbox.deliverSignal(notification.payload)
                            }
                            if case .ownHeartbeat(let number) = delivery {
                                listenState.withLockedValue {
                                    $0.heartbeatsReturned = max($0.heartbeatsReturned, number)
                                }
                            }
                        }
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
    private func heartbeat(_ connection: PostgresConnection, _ inbox: RemoteInbox) async throws {
        while true {
            try await Task.sleep(for: configuration.heartbeatInterval)
            let (payload, number) = inbox.heartbeat()
            // Not awaited: on a dead connection the query may never complete; the timeout decides.
            connection.query(notifyQuery([payload]), logger: logger).whenFailure { [logger] error in
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
}

extension PostgresRowSequence {
    /// Reads the rows to the end, so that the statement (and its NOTIFYs) has completed.
    func consume() async throws {
        for try await _ in self {}
    }
}
