import PostgresNIO

/// Why a ``PostgresEventBridge`` could not be made, stopped listening or could not send (the other
/// errors of publishing and registering are EventBusRemote's `RemoteBridgeError`).
///
/// ```swift
/// do {
///     _ = try PostgresEventBridge(
///         bus: bus, listenConfiguration: config, client: client, channel: "App Events")
/// } catch PostgresEventBridgeError.invalidChannelName(let name) {
///     logger.error("bad channel \(name)")
/// }
/// ```
public enum PostgresEventBridgeError: Error, CustomStringConvertible {
    /// A PostgreSQL or connection error, with what PostgreSQL said: `message` is the server's
    /// severity, SQLSTATE, message and detail, or postgres-nio's error code and its cause (the
    /// `description` of postgres-nio's `PSQLError` is a generic text that hides them).
    /// `underlying` is the original error. Carried by `BridgeStatus.interrupted(_:)` and
    /// `BridgeIssue.publishFailed(wireName:sequence:error:)`.
    case postgres(message: String, underlying: any Error)

    /// The channel name is not a lowercase PostgreSQL identifier of 1 to 63 bytes
    /// (`[a-z_][a-z0-9_]*`).
    case invalidChannelName(String)

    /// The durable consumer name is empty or longer than 200 bytes.
    case invalidConsumerName(String)

    /// The consumer group's name is empty or longer than 190 bytes, or its number of partitions is
    /// not between 1 and 1,024 (``PostgresEventBridge/ConsumerGroup``).
    case invalidGroup(name: String, partitions: Int)

    /// Consumer group `group` exists on the channel with `stored` partitions; this bridge was
    /// configured with `configured`. The number is fixed when a group is created: configure the
    /// stored one, or remove the group and create it anew. Carried by
    /// `BridgeStatus.interrupted(_:)`, retried with the reconnection's backoff (nothing is read).
    case groupPartitionsMismatch(group: String, stored: Int, configured: Int)

    /// `consumer` names a cursor of the other kind on the channel: a plain consumer named like a
    /// group's partition (`"<group>#<n>"`), or a group whose partition names a plain consumer's
    /// cursor. Nothing is read. Carried by `BridgeStatus.interrupted(_:)`, retried with the
    /// reconnection's backoff.
    case consumerNameTaken(String)

    /// The listening connection's heartbeat did not come back within the limit.
    case heartbeatTimeout(Duration)

    /// A statement of a durable receiver did not complete within the limit (the heartbeat's):
    /// the connection is replaced.
    case statementTimeout(Duration)

    /// The server closed the listening connection.
    case connectionClosed

    /// Another bridge took over the lease of durable consumer `consumer` (this one stalled past
    /// ``PostgresEventBridge/Durable/leaseDuration`` without renewing it), or an operator reset the
    /// consumer's cursor or removed it (``PostgresEventBridge/resetCursor(of:to:)``,
    /// ``PostgresEventBridge/removeConsumer(_:force:)``): this one moved nothing, gives its
    /// connection up and takes the lease again or stands by. Carried by `BridgeStatus.interrupted(_:)`.
    case leaseLost(consumer: String)

    /// A scheduled publish (``PostgresEventBridge/publish(_:after:)`` and the like) or a cancel on
    /// a bridge at most once: scheduled events are rows of the durable outbox's schema, fired by
    /// durable bridges, so they need ``PostgresEventBridge/Delivery/durable(_:)`` on every instance
    /// of the channel. Nothing was scheduled.
    case schedulingNeedsDurableDelivery

    /// An operation on consumers (``PostgresEventBridge/consumers()``,
    /// ``PostgresEventBridge/resetCursor(of:to:)``, …) on a bridge at most once: consumers and their
    /// cursors exist only in durable delivery. Nothing was read or changed.
    case operationsNeedDurableDelivery

    /// ``PostgresEventBridge/resetCursor(of:to:)`` named a consumer that has no cursor on the
    /// channel. Nothing was changed.
    case unknownConsumer(String)

    /// ``PostgresEventBridge/resetCursor(of:to:)`` named an outbox row (`ReplayPoint.row(_:)`)
    /// that the channel does not have (never, or deleted by retention). Nothing was changed.
    case unknownOutboxRow(Int64)

    /// ``PostgresEventBridge/process(_:_:)`` or a dead-letter operation on a bridge at most once:
    /// transactional handlers run in the transaction that moves a durable consumer's cursor, so
    /// they need ``PostgresEventBridge/Delivery/durable(_:)``. Nothing was registered or changed.
    case processingNeedsDurableDelivery

    /// ``PostgresEventBridge/process(_:_:)`` for a type (named here) that has a transactional
    /// handler already on this bridge: the first one stays.
    case processorAlreadyRegistered(String)

    /// A transactional handler did not return within
    /// ``PostgresEventBridge/Processing/handlerTimeout``: its transaction is rolled back and the
    /// connection replaced; the attempt counts towards the event's dead letter.
    case handlerTimeout(Duration)

    /// One line for logs.
    ///
    /// ```swift
    /// print(PostgresEventBridgeError.connectionClosed.description)
    /// ```
    public var description: String {
        switch self {
        case .postgres(let message, _):
            return message
        case .invalidChannelName(let name):
            return
                "invalid channel name \(name.debugDescription): use 1 to 63 bytes of [a-z0-9_], not starting with a digit"
        case .invalidConsumerName(let name):
            return "invalid durable consumer name \(name.debugDescription): use 1 to 200 bytes"
        case .invalidGroup(let name, let partitions):
            return
                "invalid consumer group \(name.debugDescription) of \(partitions) partitions: use a name of 1 to 190 bytes and 1 to 1,024 partitions"
        case .groupPartitionsMismatch(let group, let stored, let configured):
            return
                "consumer group \(group.debugDescription) has \(stored) partitions, this bridge was configured with \(configured)"
        case .consumerNameTaken(let name):
            return
                "\(name.debugDescription) names a cursor of the other kind on this channel (a plain consumer and a group's partition)"
        case .heartbeatTimeout(let limit):
            return "the heartbeat did not come back within \(limit)"
        case .statementTimeout(let limit):
            return "a statement of the durable receiver did not complete within \(limit)"
        case .connectionClosed:
            return "the server closed the listening connection"
        case .leaseLost(let consumer):
            return
                "the lease of consumer \(consumer.debugDescription) was lost: another bridge took it over, or its cursor was reset or removed"
        case .processingNeedsDurableDelivery:
            return "transactional handlers need durable delivery: set Configuration.delivery to .durable(…)"
        case .processorAlreadyRegistered(let type):
            return "\(type) already has a transactional handler on this bridge"
        case .handlerTimeout(let limit):
            return "a transactional handler did not return within \(limit)"
        case .schedulingNeedsDurableDelivery:
            return "scheduled events need durable delivery: set Configuration.delivery to .durable(…)"
        case .operationsNeedDurableDelivery:
            return "operations on consumers need durable delivery: set Configuration.delivery to .durable(…)"
        case .unknownConsumer(let name):
            return "no consumer \(name.debugDescription) on this channel"
        case .unknownOutboxRow(let id):
            return "no outbox row \(id) on this channel (never, or deleted by retention)"
        }
    }
}

extension PostgresEventBridgeError {
    /// `error` as ``postgres(message:underlying:)`` if it is a `PSQLError`, whose description would
    /// hide PostgreSQL's message; any other error as it is.
    static func describing(_ error: any Error) -> any Error {
        guard let error = error as? PSQLError else { return error }
        var parts: [String] = []
        if let info = error.serverInfo {
            // "FATAL 57P01: terminating connection due to administrator command[: detail]"
            parts.append([info[.severity], info[.sqlState]].compactMap { $0 }.joined(separator: " "))
            parts += [info[.message], info[.detail]].compactMap { $0 }
        } else {
            parts.append("\(error.code)")
            // The cause may be a PSQLError too, whose description hides its message as well (and
            // may only repeat the code).
            if let underlying = error.underlying.map({ "\(describing($0))" }), underlying != parts[0] {
                parts.append(underlying)
            }
        }
        return PostgresEventBridgeError.postgres(message: parts.joined(separator: ": "), underlying: error)
    }
}
