public import EventBus
public import Foundation

extension RemoteInbox {
    /// What a stored payload is to a transport's own handlers (``RemoteInbox/storedEvent(_:)``):
    /// an event they may run on, one held for a newer instance, or one that is not for them.
    ///
    /// ```swift
    /// switch inbox.storedEvent(row.payload) {
    /// case .event(let stored): try await handle(stored.event)
    /// case .held(let reason): stopBefore(row, reason)   // never acknowledged
    /// case .notAnEvent: break                          // deliverAndWait reports it
    /// }
    /// ```
    public enum StoredEvent: Sendable {
        /// An authentic envelope of a registered type, decoded (upcast if it was an older version).
        case event(DecodedEvent)

        /// A payload this instance cannot decode and an upgraded one may: an envelope or event
        /// version it does not read, or a payload that does not decode as its registered type.
        /// ``RemoteInbox/deliverAndWait(_:)`` holds it the same way: it must not be acknowledged.
        case held(reason: String)

        /// Not an event for this instance: malformed, forged, a heartbeat, or a wire name it does
        /// not register. ``RemoteInbox/deliverAndWait(_:)`` reports and skips it as usual.
        case notAnEvent
    }

    /// A decoded stored event, with what its envelope said about it.
    ///
    /// ```swift
    /// if case .event(let stored) = inbox.storedEvent(payload), let order = stored.event as? OrderPlaced {
    ///     print(stored.wireName, stored.origin, stored.sequence, order)
    /// }
    /// ```
    public struct DecodedEvent: Sendable {
        /// The event, of the type registered for its wire name.
        public let event: any Event
        /// The wire name as the envelope stated it (with its version, `name@2`).
        public let wireName: String
        /// The publishing bridge's origin.
        public let origin: UUID
        /// The event's number in its origin's series.
        public let sequence: UInt64
    }

    /// Decodes `payload`, read from a durable transport's store, for the transport's own handlers
    /// (a handler that runs in the transaction that acknowledges the payload), without recording,
    /// reporting or dispatching anything: ``deliverAndWait(_:)`` does that afterwards.
    ///
    /// The same checks as ``deliverAndWait(_:)`` makes, in the same order (size, envelope version,
    /// authentication with a shared key, fields, wire name, payload), and the same payloads held;
    /// not the echo or duplicate checks: a stored row is for every consumer, its publisher's too,
    /// and the store's cursor rules out a repeat. Runs on the caller's thread, outside any lock;
    /// never traps.
    ///
    /// ```swift
    /// if case .event(let stored) = inbox.storedEvent(row.payload) { try await handler(stored.event) }
    /// ```
    public func storedEvent(_ payload: String) -> StoredEvent {
        let parsed = Envelope.parse(
            payload, maximumBytes: core.maximumPayloadBytes, verifier: core.authenticator,
            channel: core.format.channel, acceptsPrevious: core.acceptsPreviousVersion)
        switch parsed {
        case .newer(let reason):
            return .held(reason: reason)
        case .invalid, .unauthenticated, .heartbeat:
            return .notAnEvent
        case .event(let envelope):
            switch core.registry.withLock({ $0.lookup(statedName: envelope.wireName) }) {
            case .unknown:
                return .notAnEvent
            case .unreadable(let reason):
                return .held(reason: reason)
            case .decode(let decode):
                do {
                    let decoded = try decode(envelope.data)
                    return .event(
                        DecodedEvent(
                            event: decoded.event, wireName: envelope.wireName, origin: envelope.stream.origin,
                            sequence: envelope.sequence))
                } catch {
                    return .held(reason: "\(envelope.wireName) did not decode: \(error)")
                }
            }
        }
    }

    /// Reports ``BridgeIssue/deadLettered(consumer:wireName:letter:attempts:reason:)``: a durable
    /// transport's transactional handler failed `attempts` times on an event, which it moved to its
    /// dead letters as `letter` in the transaction that moved the consumer past it. Call it after
    /// that transaction committed. Dispatched on the bus queue.
    ///
    /// ```swift
    /// inbox.deadLettered(consumer: name, wireName: stored.wireName, letter: id, attempts: 3, reason: "\(error)")
    /// ```
    public func deadLettered(consumer: String, wireName: String, letter: Int64, attempts: Int, reason: String) {
        core.report(
            .deadLettered(consumer: consumer, wireName: wireName, letter: letter, attempts: attempts, reason: reason))
    }
}
