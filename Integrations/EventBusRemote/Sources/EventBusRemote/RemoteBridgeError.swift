public import EventBus

/// Why a ``RemoteBridge`` call failed.
///
/// ```swift
/// do {
///     try await cluster.publish(OrderShipped(orderID: id))
/// } catch RemoteBridgeError.payloadTooLarge(let bytes, let limit) {
///     logger.error("order event too large: \(bytes) bytes, over \(limit)")
/// }
/// ```
public enum RemoteBridgeError: Error, CustomStringConvertible {
    /// The event's type was not registered with ``RemoteBridge/register(_:as:)``.
    case unregisteredType(any Event.Type)

    /// The envelope would take `bytes` UTF-8 bytes, over the transport's `limit`
    /// (``RemoteTransport/maximumPayloadBytes``). Nothing was sent or dispatched.
    case payloadTooLarge(bytes: Int, limit: Int)

    /// The serial publisher already has `capacity` publishes waiting. Nothing was sent or
    /// dispatched.
    case publishBufferFull(capacity: Int)

    /// ``RemoteBridge/run()`` was called while it was already running.
    case alreadyRunning

    /// The publish was not confirmed sent within ``RemoteBridge/Configuration/publishTimeout``
    /// (`after`): the event was dispatched locally but **may not have reached other instances**
    /// (or may still reach them, if its send was under way).
    case publishTimedOut(after: Duration)

    /// A ``RemoteBridge/PendingEvent`` could not be sealed: its MAC did not verify under this
    /// bridge's key (or it has none while the bridge has a key), or its wire name is invalid.
    /// Reported as ``BridgeIssue/unauthenticated(reason:bytes:excerpt:)``; nothing was sealed.
    case pendingEventRefused(reason: String)

    /// A received event's version is one this bridge does not read: newer than its registration,
    /// or older without an upcaster (``RemoteBridge/register(_:as:version:upcasting:publishing:)``).
    /// Carried by ``BridgeIssue/undecodablePayload(wireName:origin:error:)``.
    case unreadableVersion(String)

    /// One line for logs.
    ///
    /// ```swift
    /// print(RemoteBridgeError.alreadyRunning.description)
    /// ```
    public var description: String {
        switch self {
        case .unregisteredType(let type):
            return "\(type) is not registered with the bridge: call register(_:as:) first"
        case .payloadTooLarge(let bytes, let limit):
            return "the envelope takes \(bytes) bytes, over \(limit)"
        case .publishBufferFull(let capacity):
            return "\(capacity) publishes are already waiting"
        case .alreadyRunning:
            return "the bridge is already running"
        case .publishTimedOut(let limit):
            return "not confirmed sent within \(limit): it may not have reached other instances"
        case .pendingEventRefused(let reason):
            return "a pending event was refused: \(reason)"
        case .unreadableVersion(let reason):
            return reason
        }
    }
}
