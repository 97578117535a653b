public import EventBus
public import Foundation

/// Something a ``RemoteBridge`` refused, skipped, dropped or failed to send, or a loss it counted,
/// dispatched on the bridge's bus.
///
/// Every event that one instance publishes and another does not receive is accounted for here or
/// by a ``BridgeStatus`` (the receiver was not listening): no loss is silent, and neither is a
/// dropped duplicate. None of these is a crash; the bridge carries on. The issues of the publishing
/// side are also thrown by ``RemoteBridge/publish(_:)``.
///
/// Issues are dispatched with `EventBus.dispatchOnBusQueue(_:)`: synchronous subscribers run on the
/// bus's serial queue, never on a transport's thread and never under a lock of the bridge, in
/// order with the received events (a gap is reported just before the event that revealed it).
///
/// ```swift
/// bus.on(BridgeIssue.self).next { issue in
///     logger.warning("cluster events: \(issue)")
/// }
/// ```
public enum BridgeIssue: Event, CustomStringConvertible {
    /// A publish was refused before anything was sent or dispatched: its envelope would take
    /// `bytes` UTF-8 bytes, over the transport's ``RemoteTransport/maximumPayloadBytes``.
    case payloadTooLarge(wireName: String, bytes: Int)

    /// A publish was refused before anything was sent or dispatched: `capacity` publishes were
    /// already waiting for the bridge's serial publisher (the transport is slower than the app).
    case publishBufferFull(wireName: String, capacity: Int)

    /// A send failed or was not confirmed within ``RemoteBridge/Configuration/publishTimeout``
    /// (`error` is then ``RemoteBridgeError/publishTimedOut(after:)``): the event was dispatched
    /// locally but **may not have reached other instances**. The bridge cannot know: a connection
    /// that fails after the statement was sent may have delivered it. Receivers that did not get
    /// it count it as ``missed(origin:count:before:)``.
    case publishFailed(wireName: String, sequence: UInt64, error: any Error)

    /// A ``RemoteTransport/send(_:)`` did not return within the publish timeout (`after`), with
    /// `waiting` publishes queued behind it: the transport cannot reach its server (for
    /// PostgreSQL: its pool has no working connection). The send is abandoned and its publishes
    /// fail (``publishFailed(wireName:sequence:error:)``); reported once per abandoned send.
    case sendStalled(after: Duration, waiting: Int)

    /// The publisher sent a batch again after ``sendStalled(after:waiting:)``: the transport
    /// reaches its server again. `stalledFor` runs from the first abandoned send of the stall to
    /// this successful one; the publishes that failed meanwhile were each reported
    /// (``publishFailed(wireName:sequence:error:)``). Reported once per stall.
    case sendRecovered(stalledFor: Duration)

    /// A payload on the channel was not a valid envelope (foreign, malformed, oversized or of an
    /// unsupported version); it was skipped. `excerpt` is its first 80 characters.
    case undecodableNotification(reason: String, bytes: Int, excerpt: String)

    /// A payload did not authenticate with the bridge's shared key (no MAC, a malformed one, or
    /// one made with another key or over altered bytes); it was skipped, and its (origin,
    /// sequence) was not recorded, so the real envelope is still delivered. `excerpt` is its
    /// first 80 characters.
    case unauthenticated(reason: String, bytes: Int, excerpt: String)

    /// A well-formed envelope named a wire name this bridge has not registered; it was skipped. Its
    /// (origin, sequence) is recorded when it authenticated under the shared key (it is not a loss:
    /// the origin's next event is not reported as ``missed(origin:count:before:)``), not without a
    /// key. Normal in a cluster whose instances register different event types.
    case unknownWireName(String, origin: UUID)

    /// An envelope of a registered type whose payload did not decode as that type (another
    /// instance's version of the type differs, or someone forged it); it was skipped. Its (origin,
    /// sequence) is recorded when it authenticated under the shared key (this report counts the
    /// loss; the next event does not count it again), not without a key.
    case undecodablePayload(wireName: String, origin: UUID, error: any Error)

    /// An envelope whose (origin, sequence) was already delivered was dropped. `conflicting` when
    /// its bytes differ from the delivered one's: one of the two was forged (without a shared key,
    /// possibly the delivered one) or a publisher reused its sequence numbers.
    case duplicateDropped(origin: UUID, sequence: UInt64, conflicting: Bool)

    /// An envelope older than the duplicate window (`sequence` is at least the window's size
    /// below `latest`, the latest of its origin) was dropped: an origin's events arrive in order,
    /// so it is a replay, or it comes from a publisher that reuses sequence numbers.
    case olderThanWindow(origin: UUID, sequence: UInt64, latest: UInt64)

    /// With a shared key, a signed envelope received live was refused as stale, before its (origin,
    /// sequence) was recorded: signed (by its publisher's clock) before this receiver's listening
    /// period began, longer ago than ``RemoteBridge/Configuration/maximumEnvelopeAge``, or in the
    /// future beyond ``RemoteBridge/Configuration/maximumClockSkew``. A replay, typically to a
    /// restarted receiver that never saw it (or clocks too far apart: `reason` says which).
    case stale(origin: UUID, sequence: UInt64, reason: String)

    /// A durable receiver refused an event envelope that came on its wake-up channel instead of
    /// from its store (``RemoteInbox/deliverSignal(_:)``): it takes events only from the store, so
    /// a replayed or forged notification is never dispatched.
    case notFromStore(origin: UUID, sequence: UInt64)

    /// An envelope claimed this bridge's own origin but this bridge did not send it (or, live, sent
    /// it so long ago that it no longer remembers it: more than 4,096 publishes, or twice the
    /// publish buffer's capacity if larger): it was dropped, not taken for an echo. From a durable
    /// store (trusted), an echo of a sequence this bridge numbered is its own however late it comes
    /// back: a transactional publish is then delivered locally, never reported as this.
    case claimsOwnOrigin(wireName: String, sequence: UInt64)

    /// `count` events of `origin`, the sequences just below `before`, never arrived: the bridge
    /// was not listening (see ``BridgeStatus``) or the transport lost them. Reported when the
    /// origin's next event, `before`, arrives (an origin that publishes nothing more reveals
    /// nothing).
    case missed(origin: UUID, count: UInt64, before: UInt64)

    /// The first event received from `origin` after an interruption has sequence `sequence`: the
    /// events before it were published before this bridge listened or during the interruption,
    /// and how many of them were missed is unknown.
    case missedUncounted(origin: UUID, sequence: UInt64)

    /// A durable receiver restarted after its previous run stopped between handing a batch to the
    /// bus and acknowledging it (the process was killed, or crashed): the `count` events of that
    /// batch, whose handlers may already have run, are delivered again, just after this issue.
    /// The only case in which a durable consumer gets an event twice.
    case redelivered(consumer: String, count: Int)

    /// The retention limits of a durable transport deleted `count` events that consumer
    /// `consumer` had not read yet (it was stopped, or slower than the limits allow): they are
    /// lost for it. Reported when it next acknowledges a batch or starts.
    case expired(consumer: String, count: Int)

    /// Durable consumer `consumer` stopped before a stored event this instance cannot decode (an
    /// envelope or event version newer than it reads, an older event version without an upcaster,
    /// a payload that does not decode as its type: `reason` says which), and **did not acknowledge
    /// it**: it released its claim and tries again every poll interval, delivering nothing after it
    /// meanwhile. An instance that reads it (upgraded, or with the upcaster) delivers it and goes
    /// on. Reported once per event and process. During a rolling upgrade this means the deploy
    /// protocol was not followed: an instance published a version before every instance read it.
    case held(consumer: String, reason: String)

    /// Another running bridge holds the lease of durable consumer `consumer`: this one delivers
    /// nothing for it and stands by, taking over when that bridge stops or its lease lapses (its
    /// unacknowledged batch then redelivered, announced). Two bridges that share a consumer name
    /// never both deliver its events. Reported once each time it starts standing by.
    case standingBy(consumer: String)

    /// An operator moved durable consumer `consumer`'s cursor (EventBusPostgres:
    /// `PostgresEventBridge.resetCursor(of:to:)`): the events it delivers next start from `to`
    /// (a description of the point: the beginning of what is kept, a time, a row, the end).
    /// `again` events it had already acknowledged are delivered again; `skipped` events it had not
    /// read are not delivered to it (counted when announced; retention may delete some before
    /// they are read, then reported as ``expired(consumer:count:)``). Reported by the bridge that
    /// reads for the consumer, just before the events from the new cursor, once per reset.
    case cursorReset(consumer: String, to: String, again: Int, skipped: Int)

    /// Durable consumer `consumer`'s cursor was removed while this bridge read for it (an
    /// operator's forced removal: EventBusPostgres's `PostgresEventBridge.removeConsumer(_:force:)`):
    /// it started again as a new consumer, after the last committed event, so the events it had not
    /// read until then are not delivered to it (how many is not known). Reported once, before the
    /// events it delivers next.
    case consumerRemoved(consumer: String)

    /// A durable consumer's transactional handler (a transport's exactly-once handler) failed on
    /// event `wireName` `attempts` times (it threw each time, or the process died while it ran),
    /// so the event was moved to the transport's dead letters (`letter` is its id there) in the
    /// transaction that moved the consumer's cursor past it: the consumer goes on, nothing is stuck,
    /// and the handler's effect for that event did not happen. `reason` is the last error. A dead
    /// letter can be listed and requeued (for PostgreSQL: `PostgresEventBridge.deadLetters` and
    /// `requeue`). Reported after the COMMIT, once per dead letter.
    case deadLettered(consumer: String, wireName: String, letter: Int64, attempts: Int, reason: String)

    /// ``RemoteBridge/register(_:as:)`` refused a wire name: invalid, or already registered
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
            return "publish of \(name) refused: \(bytes) bytes exceed the transport's limit"
        case .publishBufferFull(let name, let capacity):
            return "publish of \(name) refused: \(capacity) publishes already waiting"
        case .publishFailed(let name, let sequence, let error):
            return "send of \(name) #\(sequence) failed, it may not have reached other instances: \(error)"
        case .sendStalled(let limit, let waiting):
            return "a send stalled for \(limit), \(waiting) publishes waiting: the transport cannot reach its server"
        case .sendRecovered(let duration):
            return "the publisher sends again, \(duration) after its first stalled send"
        case .undecodableNotification(let reason, let bytes, let excerpt):
            return "skipped a payload of \(bytes) bytes (\(reason)): \(excerpt.debugDescription)"
        case .unauthenticated(let reason, let bytes, let excerpt):
            return
                "skipped a payload of \(bytes) bytes that did not authenticate (\(reason)): \(excerpt.debugDescription)"
        case .unknownWireName(let name, let origin):
            return "skipped \(name.debugDescription) from \(origin): not registered here"
        case .undecodablePayload(let name, let origin, let error):
            return "skipped \(name) from \(origin): its payload did not decode: \(error)"
        case .duplicateDropped(let origin, let sequence, let conflicting):
            return conflicting
                ? "dropped #\(sequence) from \(origin): another envelope with that number was delivered (a forgery?)"
                : "dropped #\(sequence) from \(origin): a duplicate of a delivered envelope"
        case .olderThanWindow(let origin, let sequence, let latest):
            return "dropped #\(sequence) from \(origin): older than the duplicate window (latest #\(latest)), a replay"
        case .stale(let origin, let sequence, let reason):
            return "refused #\(sequence) from \(origin) as a stale replay: \(reason)"
        case .notFromStore(let origin, let sequence):
            return "refused #\(sequence) from \(origin): a durable receiver takes events only from its store"
        case .claimsOwnOrigin(let name, let sequence):
            return "dropped \(name) #\(sequence): it claims this bridge's origin, which did not send it"
        case .missed(let origin, let count, let before):
            return "missed \(count) events from \(origin) before #\(before)"
        case .missedUncounted(let origin, let sequence):
            return "first event from \(origin) after an interruption is #\(sequence): an unknown number missed"
        case .redelivered(let consumer, let count):
            return
                "consumer \(consumer.debugDescription) restarted within a batch: its \(count) events are delivered again"
        case .expired(let consumer, let count):
            return "consumer \(consumer.debugDescription) lost \(count) events deleted by retention before it read them"
        case .held(let consumer, let reason):
            return "consumer \(consumer.debugDescription) holds at an event it cannot decode, unacknowledged: \(reason)"
        case .standingBy(let consumer):
            return "consumer \(consumer.debugDescription) is leased to another running bridge: this one stands by"
        case .cursorReset(let consumer, let point, let again, let skipped):
            return
                "consumer \(consumer.debugDescription)'s cursor was reset to \(point): \(again) events delivered again, \(skipped) skipped"
        case .consumerRemoved(let consumer):
            return
                "consumer \(consumer.debugDescription) was removed while it ran: it starts again after the last event, the events it had not read are not delivered to it"
        case .deadLettered(let consumer, let name, let letter, let attempts, let reason):
            return
                "consumer \(consumer.debugDescription) dead-lettered \(name) (letter \(letter)) after \(attempts) failed attempts: \(reason)"
        case .registrationRefused(let name, let reason):
            return "registration of \(name.debugDescription) refused: \(reason)"
        }
    }
}
