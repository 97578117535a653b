public import EventBus

/// Why a ``PostgresEventBridge`` call failed.
///
/// ```swift
/// do {
///     try await cluster.publish(OrderShipped(orderID: id))
/// } catch PostgresEventBridgeError.payloadTooLarge(let bytes) {
///     logger.error("order event too large: \(bytes) bytes")
/// }
/// ```
public enum PostgresEventBridgeError: Error, CustomStringConvertible {
    /// The channel name is not a lowercase PostgreSQL identifier of 1 to 63 bytes
    /// (`[a-z_][a-z0-9_]*`).
    case invalidChannelName(String)

    /// The event's type was not registered with ``PostgresEventBridge/register(_:as:)``.
    case unregisteredType(any Event.Type)

    /// The envelope would take `bytes` UTF-8 bytes, over
    /// ``PostgresEventBridge/maximumPayloadBytes``. Nothing was sent or dispatched.
    case payloadTooLarge(bytes: Int)

    /// The serial publisher already has `capacity` publishes waiting. Nothing was sent or
    /// dispatched.
    case publishBufferFull(capacity: Int)

    /// ``PostgresEventBridge/run()`` was called while it was already running.
    case alreadyRunning

    /// The listening connection's heartbeat did not come back within the limit.
    case heartbeatTimeout(Duration)

    /// The server closed the listening connection.
    case connectionClosed

    /// One line for logs.
    ///
    /// ```swift
    /// print(PostgresEventBridgeError.connectionClosed.description)
    /// ```
    public var description: String {
        switch self {
        case .invalidChannelName(let name):
            return
                "invalid channel name \(name.debugDescription): use 1 to 63 bytes of [a-z0-9_], not starting with a digit"
        case .unregisteredType(let type):
            return "\(type) is not registered with the bridge: call register(_:as:) first"
        case .payloadTooLarge(let bytes):
            return "the envelope takes \(bytes) bytes, over \(PostgresEventBridge.maximumPayloadBytes)"
        case .publishBufferFull(let capacity):
            return "\(capacity) publishes are already waiting"
        case .alreadyRunning:
            return "the bridge is already running"
        case .heartbeatTimeout(let limit):
            return "the heartbeat did not come back within \(limit)"
        case .connectionClosed:
            return "the server closed the listening connection"
        }
    }
}
