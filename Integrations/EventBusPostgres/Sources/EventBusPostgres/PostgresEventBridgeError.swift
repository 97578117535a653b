/// Why a ``PostgresEventBridge`` could not be made or stopped listening (the errors of publishing
/// and registering are EventBusRemote's `RemoteBridgeError`).
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
    /// The channel name is not a lowercase PostgreSQL identifier of 1 to 63 bytes
    /// (`[a-z_][a-z0-9_]*`).
    case invalidChannelName(String)

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
        case .heartbeatTimeout(let limit):
            return "the heartbeat did not come back within \(limit)"
        case .connectionClosed:
            return "the server closed the listening connection"
        }
    }
}
