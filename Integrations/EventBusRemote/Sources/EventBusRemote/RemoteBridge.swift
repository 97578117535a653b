internal import CoreMetrics
public import EventBus
public import Foundation

/// Carries registered events between app instances over a ``RemoteTransport``: the
/// transport-independent part of a remote bridge (`EventBusPostgres` is one transport on it).
///
/// Each instance makes one bridge per channel, registers the `Codable` events it exchanges under
/// explicit wire names, runs the bridge and publishes through it. Events other instances publish
/// are dispatched on the local bus as if dispatched there.
///
/// ```swift
/// struct OrderShipped: Event, Codable { let orderID: UUID }
///
/// let network = InMemoryNetwork()
/// let cluster = RemoteBridge(bus: bus, transport: network.makeTransport())
/// cluster.register(OrderShipped.self, as: "order.shipped.v1")
/// Task { try await cluster.run() }
/// try await cluster.publish(OrderShipped(orderID: id))   // local dispatch now, then sent
/// ```
///
/// ## Guarantees
///
/// - **At most once.** A receiver gets each event at most once; it misses the events published
///   while it is not receiving, which ``BridgeStatus`` reports (`.interrupted`, then
///   `.resumed(gap:)`), and each origin's next event reveals how many it missed
///   (``BridgeIssue/missed(origin:count:before:)``). Every other loss, and every dropped
///   duplicate, is reported as a ``BridgeIssue``.
/// - **Order.** One serial publisher per bridge: an instance's events reach every receiver in
///   publish order (when the transport keeps each sender's order).
/// - **No echo, no loops.** A bridge ignores its own payloads (except transactional publishes,
///   delivered locally when the echo arrives); only ``publish(_:)`` sends, and received events are
///   dispatched locally only. An envelope that claims this bridge's origin but was not sent by it
///   is reported (``BridgeIssue/claimsOwnOrigin(wireName:sequence:)``), never taken for an echo.
/// - **Integrity.** An (origin, sequence) is recorded only once its envelope has authenticated and
///   decoded as a registered type, so a refused envelope never makes a later real one a
///   "duplicate". With ``Configuration/authenticationKey`` every envelope carries an HMAC-SHA256
///   (over the channel's name too) and one without a valid MAC is refused.
/// - **Replays across restarts** (with a key). Envelopes carry their publisher's signed wall clock:
///   an envelope received live that was signed before this receiver's listening period began
///   (beyond ``Configuration/maximumClockSkew`` plus ``Configuration/publishTimeout``), longer ago
///   than ``Configuration/maximumEnvelopeAge``, or in its future is refused
///   (``BridgeIssue/stale(origin:sequence:reason:)``), so a process that never saw an envelope does
///   not deliver its replay. A durable transport takes events only from its store
///   (``RemoteInbox/deliverSignal(_:)`` refuses events on its wake-up channel).
/// - **No false loss.** With a key, an authenticated envelope of an unregistered wire name or an
///   undecodable payload is recorded, so the next event of its origin is not reported as missed.
///
/// > Important: Without a shared key, anyone who can send on the channel (for PostgreSQL: any role
/// > that can `NOTIFY`, which is every role by default) can forge events under any origin, and can
/// > suppress an origin's real events by sending its next sequence numbers first. Such a
/// > suppression is reported (``BridgeIssue/duplicateDropped(origin:sequence:conflicting:)`` with
/// > `conflicting: true`, or ``BridgeIssue/olderThanWindow(origin:sequence:latest:)``), not
/// > prevented. Configure a key when the channel is not trusted.
public final class RemoteBridge: Sendable {
    /// The bus received events, statuses and issues are dispatched on.
    public var bus: EventBus { core.bus }

    /// This bridge's origin id, in every envelope it sends: a random UUID (122 random bits) per
    /// bridge, never reused.
    public var origin: UUID { core.origin }

    /// The settings the bridge was made with.
    public let configuration: Configuration

    /// The receiving half, which the transport feeds.
    public let inbox: RemoteInbox

    private let transport: any RemoteTransport
    let core: Core
    private let isRunning = Locked(false)

    /// What the publishing and the receiving halves share.
    final class Core: Sendable {
        let bus: EventBus
        let origin: UUID
        let authenticator: Authenticator?
        let maximumPayloadBytes: Int
        /// How this bridge writes envelopes: the version, the channel its MACs cover.
        let format: Envelope.Format
        /// Whether it reads envelope version 2.
        let acceptsPreviousVersion: Bool
        /// The freshness limits of live envelopes (``Configuration/maximumClockSkew``).
        let freshness: Freshness
        let registry = Locked(Registry())
        let publisher: SerialPublisher
        let metrics: BridgeMetrics
        /// Resumes this bridge's ``DeliveryMark``s, on the bus queue (``RemoteInbox/deliverAndWait(_:)``).
        private let marks: EventToken

        /// Dispatched on the bus queue behind a batch of received events: when its handler runs, the
        /// synchronous subscribers of the events before it have returned.
        struct DeliveryMark: Event {
            let bridge: UUID
            let done: CheckedContinuation<Void, Never>
        }

        init(bus: EventBus, maximumPayloadBytes: Int, channel: String, configuration: Configuration) {
            self.bus = bus
            let origin = UUID()
            self.origin = origin
            self.maximumPayloadBytes = maximumPayloadBytes
            let previous = configuration.previousEnvelopeVersion
            format = Envelope.Format(
                version: previous == .published ? Envelope.previousVersion : Envelope.version, channel: channel)
            acceptsPreviousVersion = previous != .refused
            freshness = Freshness(
                skew: configuration.maximumClockSkew, maximumAge: configuration.maximumEnvelopeAge,
                queued: configuration.publishTimeout)
            authenticator = configuration.authenticationKey.map(Authenticator.init(key:))
            publisher = SerialPublisher(
                capacity: max(1, configuration.publishBufferCapacity), maximumBytes: maximumPayloadBytes)
            metrics = BridgeMetrics(
                prefix: configuration.metricsLabelPrefix, factory: configuration.metricsFactory ?? MetricsSystem.factory
            )
            marks = bus.on(DeliveryMark.self).next { mark in
                if mark.bridge == origin { mark.done.resume() }
            }
        }

        deinit { marks.dispose() }

        func report(_ status: BridgeStatus) {
            metrics.count(status)
            bus.dispatchOnBusQueue(status)
        }

        func report(_ issue: BridgeIssue) {
            metrics.count(issue)
            bus.dispatchOnBusQueue(issue)
        }
    }

    /// Makes a bridge over `transport`; nothing is received until ``run()``.
    ///
    /// - Parameters:
    ///   - bus: Where received events, ``BridgeStatus`` and ``BridgeIssue`` are dispatched, and where
    ///     ``publish(_:)`` dispatches locally.
    ///   - transport: What carries the envelopes; one per bridge.
    ///   - configuration: The shared key, the buffer and the duplicate window.
    ///
    /// ```swift
    /// var settings = RemoteBridge.Configuration()
    /// settings.authenticationKey = key   // the same 32 random bytes on every instance
    /// let cluster = RemoteBridge(bus: bus, transport: transport, configuration: settings)
    /// ```
    public init(bus: EventBus, transport: any RemoteTransport, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.transport = transport
        core = Core(
            bus: bus, maximumPayloadBytes: transport.maximumPayloadBytes, channel: transport.channel,
            configuration: configuration)
        inbox = RemoteInbox(core: core, window: configuration.duplicateWindow)
    }

    // MARK: Registration

    /// Lets events of type `E` cross the bridge under `wireName`, both ways.
    ///
    /// Only registered types are published and decoded: an envelope naming another wire name is
    /// skipped (``BridgeIssue/unknownWireName(_:origin:)``). Choose names that say what the event
    /// is (`"order.shipped"`) and keep them stable across deployments: the name, not the Swift
    /// type, is the contract. When the event's shape changes, register the new shape as the next
    /// version of the same name (``register(_:as:version:upcasting:publishing:)``): this is version 1.
    /// Thread-safe, O(1); may be called while the bridge runs.
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
        register(type, as: wireName, version: 1)
    }

    /// Lets events of type `E` cross the bridge as version `version` of `wireName`, reading the
    /// older versions `upcasting` names (each turned into an `E` before it is dispatched), and
    /// publishing version `publishing` (by default `version`; an older one needs its upcaster's
    /// downcast).
    ///
    /// On the wire, version 1 is `wireName` itself (so ``register(_:as:)`` is version 1) and
    /// version *k* ≥ 2 is `wireName@k`, a name that instances which never heard of versions have
    /// not registered: they skip it, and never decode a newer shape as their older type. Subscribers
    /// see only `E`, whichever version was received. A version this bridge does not read (newer
    /// than `version`, or older without an upcaster) is *unreadable*, not unknown: at most once it
    /// is reported (``BridgeIssue/undecodablePayload(wireName:origin:error:)``); a durable transport
    /// never acknowledges it (``RemoteInbox/deliverAndWait(_:)``), so an instance that reads it can.
    ///
    /// The rolling upgrade from version 1 to 2 (the deploy protocol: *publish the old version until
    /// every instance reads the new one*):
    ///
    /// 1. Deploy, one instance at a time, `register(OrderShipped.self, as: "order.shipped",
    ///    version: 2, upcasting: [.from(OrderShippedV1.self, version: 1, upcast: …, downcast: …)],
    ///    publishing: 1)`: it reads versions 1 and 2 and still writes 1, which the old instances read.
    /// 2. Once every instance runs that, deploy `publishing: 2` (or leave it out), one at a time:
    ///    every instance reads what it now writes.
    /// 3. Keep the upcaster while rows of version 1 may be read (durable: until every consumer's
    ///    cursor has passed them).
    ///
    /// Thread-safe, O(upcasters); may be called while the bridge runs. The same type, name and
    /// version again replaces the upcasters and the published version. Refused, and reported as
    /// ``BridgeIssue/registrationRefused(wireName:reason:)``: an invalid name, a version outside
    /// 1…999,999,999, an upcaster not below `version` (or two of one version), a published version
    /// without a downcast, a name taken by another type, or another name or version for this type.
    ///
    /// ```swift
    /// cluster.register(
    ///     OrderShipped.self, as: "order.shipped", version: 2,
    ///     upcasting: [
    ///         .from(OrderShippedV1.self, version: 1,
    ///               upcast: { OrderShipped(orderID: $0.orderID, carrier: nil) },
    ///               downcast: { OrderShippedV1(orderID: $0.orderID) })
    ///     ],
    ///     publishing: 1)   // step 1; step 2 drops this argument
    /// ```
    public func register<E: Event & Codable>(
        _ type: E.Type, as wireName: String, version: Int, upcasting: [Upcaster<E>] = [], publishing: Int? = nil
    ) {
        let problem =
            Names.wireNameProblem(wireName)
            ?? core.registry.withLock {
                $0.add(type, as: wireName, version: version, upcasters: upcasting, publishing: publishing ?? version)
            }
        if let problem { core.report(.registrationRefused(wireName: wireName, reason: problem)) }
    }

    // MARK: Publishing

    /// Dispatches `event` on the local bus now and sends it to the other instances.
    ///
    /// The local dispatch happens at publish time, as `EventBus.dispatch(_:)` does it (synchronous
    /// subscribers run on the calling thread before the envelope is sent); the instance does not
    /// receive its own envelope again. The envelope goes through the bridge's serial publisher (in
    /// publish order, batched when publishes queue up) to ``RemoteTransport/send(_:)``; this returns
    /// once it has been sent, or throws after ``Configuration/publishTimeout`` at the latest.
    /// Publishing does not need ``run()``. O(1) under the publisher's lock, plus encoding the event
    /// (and its MAC) outside and inside it.
    ///
    /// Refused, with nothing dispatched or sent and a ``BridgeIssue`` reported: a type that was not
    /// registered, an envelope over ``RemoteTransport/maximumPayloadBytes``, a full publish buffer.
    /// A failed send, or one not confirmed within the timeout
    /// (``RemoteBridgeError/publishTimedOut(after:)``), throws after the local dispatch and reports
    /// ``BridgeIssue/publishFailed(wireName:sequence:error:)``: the event **may not have reached
    /// other instances** (or may still reach them if its send was under way). Cancelling the calling
    /// task does not withdraw a publish already queued.
    ///
    /// ```swift
    /// try await cluster.publish(OrderShipped(orderID: id))
    /// ```
    public func publish<E: Event & Codable>(_ event: E) async throws {
        let fields = try encode(event, transactional: false)
        let admission = core.publisher.admit(wireName: fields.wireName) { sequence in
            Envelope.event(fields, sequence: sequence, format: core.format, signer: core.authenticator)
        }
        switch admission {
        case .refused(let error, let bytes):
            if case .publishBufferFull(let capacity) = error {
                core.report(.publishBufferFull(wireName: fields.wireName, capacity: capacity))
            } else {
                core.report(.payloadTooLarge(wireName: fields.wireName, bytes: bytes))
            }
            throw error
        case .admitted(let job, let startsDrain):
            bus.dispatch(event)
            if startsDrain { Task { await self.drainPublishes() } }
            let timeout = configuration.publishTimeout
            let timer = Task { [core] in
                try await Task.sleep(for: timeout)
                let error = RemoteBridgeError.publishTimedOut(after: timeout)
                if job.ticket.complete(.failure(error)) {
                    core.report(.publishFailed(wireName: job.wireName, sequence: job.sequence, error: error))
                }
            }
            defer { timer.cancel() }
            try await job.ticket.wait()
            core.metrics.serialPublished.increment()
        }
    }

    /// The envelope of `event` as a transactional publish, for a transport that sends it within
    /// the caller's transaction (PostgreSQL delivers it at COMMIT, nowhere on ROLLBACK).
    ///
    /// Nothing is dispatched or sent: the transport sends the envelope, and this instance delivers
    /// the event when its own envelope comes back (on the bus queue, like received events), so
    /// that a rolled-back event is never seen anywhere. Transactional envelopes are numbered in a
    /// series of their own, not checked for gaps (a rollback is not a loss). Refused, with a
    /// ``BridgeIssue`` reported: an unregistered type, an envelope over the transport's limit.
    ///
    /// ```swift
    /// let envelope = try cluster.transactionalEnvelope(for: OrderShipped(orderID: id))
    /// try await connection.query("SELECT pg_notify(\(channel), \(envelope))", logger: logger)
    /// ```
    public func transactionalEnvelope<E: Event & Codable>(for event: E) throws -> String {
        try sealTransactional(encode(event, transactional: true))
    }

    /// Seals `fields` into an envelope numbered in the transactional series (see
    /// ``transactionalEnvelope(for:)``); refused, and reported, above the transport's limit.
    func sealTransactional(_ fields: Envelope.EventFields) throws -> String {
        let made = core.publisher.transactional { sequence in
            Envelope.event(fields, sequence: sequence, format: core.format, signer: core.authenticator)
        }
        guard let envelope = made.envelope else {
            core.report(.payloadTooLarge(wireName: fields.wireName, bytes: made.bytes))
            throw RemoteBridgeError.payloadTooLarge(bytes: made.bytes, limit: core.maximumPayloadBytes)
        }
        core.metrics.transactionalPublished.increment()
        return envelope
    }

    /// The fields of `event`'s envelope; runs the event's `Encodable` code, so never under a lock.
    /// With a context to carry (the bus has a propagator, and it captured one), they are made
    /// inside the propagator's `send` (a tracing propagator's `send` span), with its headers.
    func encode<E: Event & Codable>(_ event: E, transactional: Bool) throws -> Envelope.EventFields {
        guard let publishing = core.registry.withLock({ $0.publishing(of: E.self) }) else {
            throw RemoteBridgeError.unregisteredType(E.self)
        }
        func fields(_ headers: [String: String]) throws -> Envelope.EventFields {
            let encoder = Envelope.payloadEncoder()
            let payload = String(decoding: try publishing.encode?(event) ?? encoder.encode(event), as: UTF8.self)
            let keyJSON = try event.eventType._eventRoutingKey.map {
                String(decoding: try encoder.encode($0), as: UTF8.self)
            }
            let contextJSON = try headers.isEmpty ? nil : String(decoding: encoder.encode(headers), as: UTF8.self)
            return Envelope.EventFields(
                origin: core.origin, wireName: publishing.statedName, keyJSON: keyJSON, transactional: transactional,
                contextJSON: contextJSON, payload: payload)
        }
        guard let propagator = bus.contextPropagator, let context = propagator.capture() else { return try fields([:]) }
        let delivery = EventContextDelivery(
            eventType: E.self, key: event._routingKey, hop: .remote(wireName: publishing.statedName),
            subscriptionID: nil)
        return try propagator.send(context, for: delivery, fields)
    }

    private func drainPublishes() async {
        let timeout = configuration.publishTimeout
        await core.publisher.drain(
            timeout: timeout,
            send: { [transport] payloads in try await transport.send(payloads) },
            failed: { job, error in
                self.core.report(.publishFailed(wireName: job.wireName, sequence: job.sequence, error: error))
            },
            stalled: {
                self.core.report(.sendStalled(after: timeout, waiting: self.core.publisher.waiting))
            },
            recovered: { self.core.report(.sendRecovered(stalledFor: $0)) }
        )
    }

    // MARK: Receiving

    /// Receives until the task is cancelled: runs the transport's
    /// ``RemoteTransport/receive(into:)`` with ``inbox``, then reports ``BridgeStatus/stopped``.
    ///
    /// Statuses (``BridgeStatus``) say when receiving starts, stops and resumes; received events
    /// are dispatched with `EventBus.dispatchOnBusQueue(_:)`, in the order the transport delivered
    /// them.
    ///
    /// - Throws: ``RemoteBridgeError/alreadyRunning`` if it is already running, and what the
    ///   transport throws.
    ///
    /// ```swift
    /// let receiving = Task { try await cluster.run() }
    /// // …
    /// receiving.cancel()
    /// ```
    public func run() async throws {
        let started = isRunning.withLock { running in
            defer { running = true }
            return !running
        }
        guard started else { throw RemoteBridgeError.alreadyRunning }
        inbox.reset()
        defer {
            isRunning.withLock { $0 = false }
            core.report(.stopped)
        }
        try await transport.receive(into: inbox)
    }
}
