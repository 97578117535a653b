public import EventBus
public import Foundation

/// Something a ``PostgresEventBridge`` refused, skipped or failed to send, dispatched on the
/// bridge's bus.
///
/// Every event that one instance publishes and another does not receive is accounted for here or
/// by a ``BridgeStatus`` (the receiver was not listening): no loss is silent. None of these is a
/// crash; the bridge carries on. The issues of the publishing side are also thrown by
/// ``PostgresEventBridge/publish(_:)``.
///
/// Issues are dispatched with `EventBus.dispatchOnBusQueue(_:)`: synchronous subscribers run on the
/// bus's serial queue, never on a NIO event loop and never under a lock of the bridge.
///
/// ```swift
/// bus.on(BridgeIssue.self).next { issue in
///     logger.warning("cluster events: \(issue)")
/// }
/// ```
public enum BridgeIssue: Event, CustomStringConvertible {
    /// A publish was refused before anything was sent or dispatched: its envelope would take
    /// `bytes` UTF-8 bytes, over the limit of
    /// ``PostgresEventBridge/maximumPayloadBytes`` (7,999) that PostgreSQL enforces.
    case payloadTooLarge(wireName: String, bytes: Int)

    /// A publish was refused before anything was sent or dispatched: `capacity` publishes were
    /// already waiting for the bridge's serial publisher (the database is slower than the app).
    case publishBufferFull(wireName: String, capacity: Int)

    /// A NOTIFY failed: the event was dispatched locally but the other instances did not get it.
    case publishFailed(wireName: String, sequence: UInt64, error: any Error)

    /// A notification on the channel was not a valid envelope (foreign, malformed, oversized or of
    /// an unsupported version); it was skipped. `excerpt` is its first 80 characters.
    case undecodableNotification(reason: String, bytes: Int, excerpt: String)

    /// A well-formed envelope named a wire name this bridge has not registered; it was skipped.
    /// Normal in a cluster whose instances register different event types.
    case unknownWireName(String, origin: UUID)

    /// An envelope of a registered type whose payload did not decode as that type (another
    /// instance's version of the type differs, or someone forged it); it was skipped.
    case undecodablePayload(wireName: String, origin: UUID, error: any Error)

    /// ``PostgresEventBridge/register(_:as:)`` refused a wire name: invalid, or already registered
    /// for another type (or the type under another name). The type stays as it was.
    case registrationRefused(wireName: String, reason: String)

    /// One line for logs.
    ///
    /// ```swift
    /// bus.on(BridgeIssue.self).next { print($0.description) }
    /// ```
    public var description: String {
        switch self {
        case .payloadTooLarge(let name, let bytes):
            return "publish of \(name) refused: \(bytes) bytes exceed \(PostgresEventBridge.maximumPayloadBytes)"
        case .publishBufferFull(let name, let capacity):
            return "publish of \(name) refused: \(capacity) publishes already waiting"
        case .publishFailed(let name, let sequence, let error):
            return "NOTIFY of \(name) #\(sequence) failed, other instances did not get it: \(error)"
        case .undecodableNotification(let reason, let bytes, let excerpt):
            return "skipped a notification of \(bytes) bytes (\(reason)): \(excerpt.debugDescription)"
        case .unknownWireName(let name, let origin):
            return "skipped \(name.debugDescription) from \(origin): not registered here"
        case .undecodablePayload(let name, let origin, let error):
            return "skipped \(name) from \(origin): its payload did not decode: \(error)"
        case .registrationRefused(let name, let reason):
            return "registration of \(name.debugDescription) refused: \(reason)"
        }
    }
}
