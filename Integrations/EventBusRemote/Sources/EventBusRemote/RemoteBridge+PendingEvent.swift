internal import CoreMetrics
public import EventBus

extension RemoteBridge {
    /// An event encoded now and sealed into an envelope later, by whichever instance sends it: its
    /// wire name, key, context headers and payload as JSON text, and, with a shared key, a MAC over
    /// them and a `binding` the transport chooses (a scheduled event's id and channel, say).
    ///
    /// What a transport stores for an event sent at a later time (EventBusPostgres's scheduled
    /// events): ``RemoteBridge/pendingEvent(for:binding:)`` makes it where the event is published,
    /// ``RemoteBridge/seal(_:binding:)`` makes the envelope when it is sent, with the sending
    /// bridge's origin, sequence, clock and MAC. A stored pending event is untrusted input: with a
    /// key, one whose MAC does not verify is refused when sealed, so a role that can write the
    /// store but lacks the key cannot have an instance sign its events.
    ///
    /// ```swift
    /// let pending = try cluster.pendingEvent(for: OrderShipped(orderID: id), binding: id.uuidString)
    /// // … stored, then, when due, in any instance with the same key:
    /// let envelope = try cluster.seal(pending, binding: id.uuidString)
    /// ```
    public struct PendingEvent: Sendable, Equatable {
        /// The registered wire name of the event's type.
        public let wireName: String
        /// The event's routing key as a JSON string, `nil` when it has none.
        public let keyJSON: String?
        /// The publishing task's context headers as a JSON object, `nil` for none.
        public let contextJSON: String?
        /// The event as JSON.
        public let payload: String
        /// With a key, the HMAC-SHA256 (64 hex digits) over the fields above and the binding;
        /// `nil` without a key.
        public let mac: String?

        /// A pending event from its stored fields (as a transport reads them back).
        ///
        /// ```swift
        /// let pending = RemoteBridge.PendingEvent(
        ///     wireName: "order.shipped.v1", keyJSON: nil, contextJSON: nil,
        ///     payload: #"{"orderID":"…"}"#, mac: storedMAC)
        /// ```
        public init(wireName: String, keyJSON: String?, contextJSON: String?, payload: String, mac: String?) {
            self.wireName = wireName
            self.keyJSON = keyJSON
            self.contextJSON = contextJSON
            self.payload = payload
            self.mac = mac
        }

        /// What the MAC covers: a domain no envelope MAC starts with, then each field and the
        /// binding with its length first (so no two sets of fields give the same text).
        func authenticatedText(binding: String) -> String {
            func field(_ text: String?) -> String { text.map { "\($0.utf8.count):\($0)" } ?? "-" }
            return "eventbus.pending.v1:" + [binding, wireName, keyJSON, contextJSON, payload].map(field).joined()
        }
    }

    /// `event` encoded as a ``PendingEvent`` bound to `binding`, to be sealed later by
    /// ``seal(_:binding:)`` (in this process or another with the same key).
    ///
    /// Runs the event's `Encodable` code on the calling thread, under no lock; dispatches nothing
    /// and sends nothing. Refused, with a ``BridgeIssue`` reported for the second: a type that was
    /// not registered (``RemoteBridgeError/unregisteredType(_:)``), an event whose envelope would
    /// be over the transport's limit however it is sealed
    /// (``RemoteBridgeError/payloadTooLarge(bytes:limit:)``).
    ///
    /// ```swift
    /// let pending = try cluster.pendingEvent(for: OrderShipped(orderID: id), binding: "42")
    /// ```
    public func pendingEvent<E: Event & Codable>(for event: E, binding: String) throws -> PendingEvent {
        let fields = try encode(event, transactional: true)
        // The largest envelope it can become: the largest sequence number, signed.
        let bytes = Envelope.event(fields, sequence: .max, format: core.format, signer: core.authenticator).utf8.count
        guard bytes <= core.maximumPayloadBytes else {
            core.report(.payloadTooLarge(wireName: fields.wireName, bytes: bytes))
            throw RemoteBridgeError.payloadTooLarge(bytes: bytes, limit: core.maximumPayloadBytes)
        }
        let unsigned = PendingEvent(
            wireName: fields.wireName, keyJSON: fields.keyJSON, contextJSON: fields.contextJSON,
            payload: fields.payload, mac: nil)
        return PendingEvent(
            wireName: fields.wireName, keyJSON: fields.keyJSON, contextJSON: fields.contextJSON,
            payload: fields.payload, mac: core.authenticator?.mac(of: unsigned.authenticatedText(binding: binding)))
    }

    /// The envelope of `pending`, made now: this bridge's origin, the next number of its
    /// transactional series (not checked for gaps: the sending transaction may roll back), its
    /// clock and, with a key, its MAC. The transport sends it; this bridge delivers it locally
    /// when it comes back, like a transactional publish.
    ///
    /// With a key, `pending` must carry a MAC over its fields and `binding` made under the same
    /// key (``pendingEvent(for:binding:)``); the wire name must be valid. Refused otherwise
    /// (``RemoteBridgeError/pendingEventRefused(reason:)``, reported as
    /// ``BridgeIssue/unauthenticated(reason:bytes:excerpt:)``), and over the transport's limit
    /// (``RemoteBridgeError/payloadTooLarge(bytes:limit:)``, reported). Thread-safe, O(size) under
    /// the publisher's lock (the envelope is built there, as for a transactional publish).
    ///
    /// ```swift
    /// let envelope = try cluster.seal(pending, binding: "42")
    /// ```
    public func seal(_ pending: PendingEvent, binding: String) throws -> String {
        func refuse(_ reason: String) -> RemoteBridgeError {
            let text = pending.authenticatedText(binding: binding)
            core.report(.unauthenticated(reason: reason, bytes: text.utf8.count, excerpt: String(text.prefix(64))))
            return RemoteBridgeError.pendingEventRefused(reason: reason)
        }
        if let problem = Names.statedWireNameProblem(pending.wireName) { throw refuse("a pending event: \(problem)") }
        if let authenticator = core.authenticator {
            guard let mac = pending.mac else { throw refuse("a pending event without a MAC") }
            guard authenticator.isValid(mac: mac, of: pending.authenticatedText(binding: binding)) else {
                throw refuse("a pending event with a wrong MAC: another key or binding, or altered")
            }
        }
        return try sealTransactional(
            Envelope.EventFields(
                origin: core.origin, wireName: pending.wireName, keyJSON: pending.keyJSON, transactional: true,
                contextJSON: pending.contextJSON, payload: pending.payload))
    }
}
