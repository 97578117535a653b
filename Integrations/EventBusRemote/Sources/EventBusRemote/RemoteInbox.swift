import CoreMetrics
import EventBus
import Foundation

/// Where a ``RemoteTransport`` hands what it receives: payloads, and when it starts and stops
/// receiving. The receiving half of a ``RemoteBridge``; the transport gets it from
/// ``RemoteTransport/receive(into:)``.
///
/// Each payload is checked in this order: size, envelope version, authentication (with a shared
/// key), fields, echo of this instance's own publishes, freshness (with a key, for payloads
/// received live), wire name, payload decoding, and only then its (origin, sequence) against the
/// duplicate window, where it is recorded (with a key, an authenticated envelope of an unknown wire
/// name or an undecodable payload is recorded too: it is not a loss). Whatever
/// is refused or dropped is reported as a ``BridgeIssue``; a gap in an origin's sequence numbers
/// is reported with its count before the event that revealed it. Events are dispatched with
/// `EventBus.dispatchOnBusQueue(_:)`.
///
/// Thread-safe; every method is O(1) under the inbox's lock, plus the payload's decoding outside it.
///
/// ```swift
/// func receive(into inbox: RemoteInbox) async throws {
///     inbox.listening()
///     for try await payload in channel { inbox.deliver(payload) }
/// }
/// ```
public final class RemoteInbox: Sendable {
    let core: RemoteBridge.Core
    private let state: Locked<State>

    private struct State {
        var history: ReceiveHistory
        var interruptedAt: ContinuousClock.Instant?
        var hasListened = false
        var heartbeatsSent: UInt64 = 0
        /// When the current listening period began: the run's first listening, or the last resume.
        var listeningSince: Date?
        /// Events retention deleted before a durable consumer read them (reported `expired`) whose
        /// sequences have not shown as a gap yet: so many skipped sequences are not `missed`.
        var expiredUnmatched: UInt64 = 0
    }

    init(core: RemoteBridge.Core, window: Int) {
        self.core = core
        state = Locked(State(history: ReceiveHistory(window: window)))
    }

    /// What ``deliver(_:)`` did with a payload.
    public enum Delivery: Equatable, Sendable {
        /// Dispatched, or refused and reported: nothing for the transport to do.
        case handled
        /// The payload was this instance's own heartbeat number `number`
        /// (``heartbeat()``): it went through the channel and back.
        case ownHeartbeat(UInt64)
    }

    /// Where a payload came from: a live channel (freshness checked, with a key), a durable
    /// transport's store, or a durable transport's wake-up channel (events refused).
    enum Source: Equatable {
        case live
        /// `subset`: the store hands this receiver a subset of each origin's events (a partition of
        /// a consumer group), so a skipped sequence is not a loss and sequences come out of order.
        case store(subset: Bool)
        case signal

        var isStore: Bool { if case .store = self { true } else { false } }
    }

    /// Checks, records and dispatches one received payload, or reports why not; never traps.
    ///
    /// Runs on the caller's thread; the event (or the issue) is dispatched on the bus's queue.
    ///
    /// ```swift
    /// for try await notification in notifications { inbox.deliver(notification.payload) }
    /// ```
    @discardableResult
    public func deliver(_ payload: String) -> Delivery {
        deliver(payload, from: .live).delivery
    }

    /// Handles a payload that came on a durable transport's wake-up channel rather than from its
    /// store: a heartbeat as ``deliver(_:)`` does; an event envelope is refused and reported
    /// (``BridgeIssue/notFromStore(origin:sequence:)``), never dispatched, since a durable receiver
    /// takes events only from its store (a replayed or forged notification cannot deliver one);
    /// anything else as ``deliver(_:)`` reports it. Never traps.
    ///
    /// Runs on the caller's thread; an issue is dispatched on the bus's queue.
    ///
    /// ```swift
    /// for try await notification in notifications {
    ///     if notification.payload == wakePayload { waker.wake() } else { inbox.deliverSignal(notification.payload) }
    /// }
    /// ```
    @discardableResult
    public func deliverSignal(_ payload: String) -> Delivery {
        deliver(payload, from: .signal).delivery
    }

    /// What became of one payload: a ``Delivery``, or (from a store only) held: not decoded, not
    /// recorded, not reported, for the transport not to acknowledge.
    private enum Outcome {
        case delivered(Delivery)
        case held(reason: String)

        var delivery: Delivery {
            if case .delivered(let delivery) = self { delivery } else { .handled }
        }
    }

    private func deliver(_ payload: String, from source: Source) -> Outcome {
        let parsed = Envelope.parse(
            payload, maximumBytes: core.maximumPayloadBytes, verifier: core.authenticator,
            channel: core.format.channel, acceptsPrevious: core.acceptsPreviousVersion)
        switch parsed {
        case .newer(let reason) where source.isStore:
            return .held(reason: reason)
        case .invalid(let reason), .newer(let reason):
            core.report(
                .undecodableNotification(
                    reason: reason, bytes: payload.utf8.count, excerpt: String(payload.prefix(80))))
        case .unauthenticated(let reason):
            core.report(
                .unauthenticated(reason: reason, bytes: payload.utf8.count, excerpt: String(payload.prefix(80))))
        case .heartbeat(let sender, let number):
            // Other instances' heartbeats are not for us.
            return .delivered(sender == core.origin ? .ownHeartbeat(number) : .handled)
        case .event(let envelope):
            if source == .signal {
                core.report(.notFromStore(origin: envelope.stream.origin, sequence: envelope.sequence))
            } else if let reason = receive(envelope, from: source) {
                return .held(reason: reason)
            }
        }
        return .delivered(.handled)
    }

    /// Delivers `payloads`, read from a durable transport's store, in order, as ``deliver(_:)``
    /// does (except that their age is not checked: the store's cursor, not the clock, rules out a
    /// repeat), up to the first one this instance cannot decode, then waits until the bus's queue
    /// has run the synchronous subscribers of every event they dispatched; returns how many it
    /// handled and why it stopped.
    ///
    /// For a transport that acknowledges what it delivered (a durable cursor): acknowledge the
    /// first ``StoredBatch/handled`` payloads, no more. They were not only handed to the bus but
    /// handled (dispatched and their synchronous subscribers returned, or refused for good and
    /// reported: forged, malformed, of a wire name this instance does not register), so
    /// acknowledging them never loses one whose handlers did not run. The payload after them, if
    /// any, is **held** (``StoredBatch/held``): an envelope version, or a version of a registered
    /// event, that this instance does not read, or a payload that does not decode as its type. An
    /// upgraded instance (or one with the right upcaster) reads it, so it must never be
    /// acknowledged: nothing after it is delivered, nothing about it is recorded, and the
    /// transport releases its claim, reports it (``held(consumer:reason:)``) and tries again later.
    /// The wait is an internal marker event dispatched on the bus queue behind the batch.
    /// O(payloads) outside any lock, as ``deliver(_:)`` each.
    ///
    ///
    /// `subset`: the store hands this receiver only some of each origin's events (a partition of a
    /// consumer group: events of other keys go to other members), so their sequences skip and
    /// interleave: no gap is counted (a skipped sequence is another member's, not a loss), and an
    /// envelope whose sequence is far behind its origin's latest is delivered (the store's cursor,
    /// not the window, rules out a repeat). Duplicates within the window are still dropped.
    ///
    /// ```swift
    /// let rows = try await readBatch(after: cursor)
    /// let batch = await inbox.deliverAndWait(rows.map(\.payload))
    /// if batch.handled > 0 { try await acknowledge(rows[batch.handled - 1]) }   // handlers have run
    /// if let reason = batch.held { inbox.held(consumer: name, reason: reason) }
    /// ```
    public func deliverAndWait(_ payloads: [String], subset: Bool = false) async -> StoredBatch {
        var handled = 0
        var held: String?
        for payload in payloads {
            if case .held(let reason) = deliver(payload, from: .store(subset: subset)) {
                held = reason
                break
            }
            handled += 1
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            core.bus.dispatchOnBusQueue(RemoteBridge.Core.DeliveryMark(bridge: core.origin, done: done))
        }
        return StoredBatch(handled: handled, held: held)
    }

    /// Reports ``BridgeIssue/held(consumer:reason:)``: consumer `consumer` stopped before a stored
    /// event this instance cannot decode (``deliverAndWait(_:)``), did not acknowledge it, and
    /// tries again later.
    ///
    /// ```swift
    /// if let reason = batch.held { inbox.held(consumer: name, reason: reason) }
    /// ```
    public func held(consumer: String, reason: String) {
        core.report(.held(consumer: consumer, reason: reason))
    }

    /// Reports ``BridgeIssue/redelivered(consumer:count:)``, on the bus queue before the events
    /// delivered next: for a durable transport that restarts within a batch it may already have
    /// delivered.
    ///
    /// ```swift
    /// if let claimed, claimed > cursor { inbox.redelivering(consumer: name, count: rows.count) }
    /// ```
    public func redelivering(consumer: String, count: Int) {
        core.report(.redelivered(consumer: consumer, count: count))
    }

    /// Reports ``BridgeIssue/standingBy(consumer:)``: a durable transport found consumer
    /// `consumer` leased to another running bridge, and waits to take over.
    ///
    /// ```swift
    /// if !leased { inbox.standingBy(consumer: name) }
    /// ```
    public func standingBy(consumer: String) {
        core.report(.standingBy(consumer: consumer))
    }

    /// Reports ``BridgeIssue/expired(consumer:count:)``: a durable transport's retention deleted
    /// `count` events before consumer `consumer` read them.
    ///
    /// ```swift
    /// if expired > 0 { inbox.expired(consumer: name, count: expired) }
    /// ```
    public func expired(consumer: String, count: Int) {
        // The gaps they leave in their origins' sequences are this report, not `missed` too.
        state.withLock { $0.expiredUnmatched += UInt64(max(0, count)) }
        core.report(.expired(consumer: consumer, count: count))
    }

    /// Checks, records and dispatches an event envelope, or reports why not; returns why it is
    /// held instead (from a store only: a version this instance does not read, an undecodable
    /// payload), with nothing recorded or reported.
    private func receive(_ envelope: Envelope.Received, from source: Source) -> String? {
        let live = source == .live
        let origin = envelope.stream.origin
        if origin == core.origin {
            switch core.publisher.echo(of: envelope) {
            case .notSent where source.isStore && core.publisher.hasSent(envelope):
                // An echo older than the sent log keeps (the last 4,096 of each series): a store is
                // trusted, and this bridge sent that sequence. Serial: dispatched at publish time.
                guard envelope.stream.transactional else { return nil }
            case .notSent:
                core.report(.claimsOwnOrigin(wireName: envelope.wireName, sequence: envelope.sequence))
                return nil
            case .again:
                core.report(.duplicateDropped(origin: origin, sequence: envelope.sequence, conflicting: false))
                return nil
            case .first:
                // Serial publishes were dispatched at publish time; transactional ones now.
                guard envelope.stream.transactional else { return nil }
            }
        }
        if live, origin != core.origin, envelope.authenticated, let signedAt = envelope.signedAt {
            let since = state.withLock { $0.listeningSince }
            if let reason = core.freshness.staleness(signedAt: signedAt, now: Date(), listeningSince: since) {
                core.report(.stale(origin: origin, sequence: envelope.sequence, reason: reason))
                return nil
            }
        }
        // Signed and of this channel, but not for this instance: recorded (not a loss), not dispatched.
        let recordsRefusal = envelope.authenticated && origin != core.origin
        func refuse(_ issue: BridgeIssue) {
            if recordsRefusal {
                admit(envelope, refused: issue, from: source)
            } else {
                core.report(issue)
            }
        }
        let decode: Registry.Decode
        switch core.registry.withLock({ $0.lookup(statedName: envelope.wireName) }) {
        case .decode(let found):
            decode = found
        case .unknown:
            refuse(.unknownWireName(envelope.wireName, origin: origin))
            return nil
        case .unreadable(let reason):
            if source.isStore { return reason }
            refuse(
                .undecodablePayload(
                    wireName: envelope.wireName, origin: origin, error: RemoteBridgeError.unreadableVersion(reason)))
            return nil
        }
        let event: Registry.Decoded
        do {
            event = try decode(envelope.data)
        } catch {
            if source.isStore { return "\(envelope.wireName) did not decode: \(error)" }
            refuse(.undecodablePayload(wireName: envelope.wireName, origin: origin, error: error))
            return nil
        }
        if origin == core.origin {
            dispatch(event, envelope)
            return nil
        }
        admit(envelope, event: event, from: source)
        return nil
    }

    /// Records `envelope` in the duplicate window and reports what it revealed; then dispatches
    /// `event`, or (an envelope recorded but not delivered) reports `refused`.
    /// From a store that hands this receiver a subset of each origin's events (see
    /// ``deliverAndWait(_:subset:)``): gaps are not counted, and an envelope older than the window is
    /// delivered. From any store: an origin first heard after an interruption is no sign of a loss
    /// (a durable transport's interruption loses nothing: its cursor waits); an envelope older
    /// than the window is delivered (the cursor rules out repeats; a transactional series is not
    /// stored in sequence order);
    /// and a gap of events reported `expired` is not reported `missed` too.
    private func admit(
        _ envelope: Envelope.Received, event: Registry.Decoded? = nil, refused: BridgeIssue? = nil,
        from source: Source
    ) {
        let origin = envelope.stream.origin
        var verdict = state.withLock { state in
            var verdict = state.history.admit(envelope)
            // From a store, a gap of events retention deleted is reported as `expired` already.
            if source.isStore, case .deliver(let missed?) = verdict, missed > 0, state.expiredUnmatched > 0 {
                let excused = min(missed, state.expiredUnmatched)
                state.expiredUnmatched -= excused
                verdict = .deliver(missed: missed - excused)
            }
            return verdict
        }
        if source == .store(subset: true) {
            switch verdict {
            case .deliver, .older: verdict = .deliver(missed: 0)
            case .duplicate: break
            }
        } else if source.isStore, verdict == .deliver(missed: nil) {
            verdict = .deliver(missed: 0)
        } else if source.isStore, case .older = verdict {
            // From a store, far behind an origin's latest is no replay (the cursor rules repeats
            // out): a series stored in another order than it was sealed in (a transactional series:
            // two firing passes, two transactions) is delivered, not dropped.
            verdict = .deliver(missed: 0)
        }
        switch verdict {
        case .deliver(let missed):
            if let missed, missed > 0 {
                core.report(.missed(origin: origin, count: missed, before: envelope.sequence))
            } else if missed == nil {
                core.report(.missedUncounted(origin: origin, sequence: envelope.sequence))
            }
            if let refused { core.report(refused) }
            if let event {
                core.metrics.received.increment()
                dispatch(event, envelope)
            }
        case .duplicate(let sameEnvelope):
            core.report(.duplicateDropped(origin: origin, sequence: envelope.sequence, conflicting: !sameEnvelope))
        case .older(let latest):
            core.report(.olderThanWindow(origin: origin, sequence: envelope.sequence, latest: latest))
        }
    }

    /// Dispatches a received event on the bus queue, with the publisher's context restored around
    /// the dispatch (the remote hop) when the envelope carried one and the bus's context propagator
    /// reads it.
    private func dispatch(_ event: Registry.Decoded, _ envelope: Envelope.Received) {
        let context = envelope.context.flatMap { headers in core.bus.contextPropagator?.context(fromHeaders: headers) }
        event.dispatch(core.bus, context, envelope.wireName)
    }

    /// Records that the transport receives from now on: reports ``BridgeStatus/listening`` the
    /// first time in a ``RemoteBridge/run()``, ``BridgeStatus/resumed(gap:)`` after an
    /// interruption, nothing otherwise.
    ///
    /// ```swift
    /// try await connection.listen(on: channel) { notifications in inbox.listening() /* … */ }
    /// ```
    public func listening() {
        let status: BridgeStatus? = state.withLock { state in
            defer {
                state.hasListened = true
                state.interruptedAt = nil
            }
            if !state.hasListened {
                state.listeningSince = Date()
                return .listening
            }
            guard let interruptedAt = state.interruptedAt else { return nil }
            state.listeningSince = Date()
            return .resumed(gap: interruptedAt.duration(to: .now))
        }
        if let status { core.report(status) }
    }

    /// Records that the transport stopped receiving because of `error`: reports
    /// ``BridgeStatus/interrupted(_:)`` once per outage, however many reconnections fail.
    ///
    /// ```swift
    /// } catch {
    ///     inbox.interrupted(error)
    /// }
    /// ```
    public func interrupted(_ error: any Error) {
        let first = state.withLock { state in
            guard state.interruptedAt == nil else { return false }
            state.interruptedAt = .now
            if state.hasListened { state.history.hasBeenInterrupted = true }
            return true
        }
        if first { core.report(.interrupted(error)) }
    }

    /// The payload of this instance's next heartbeat, and its number: a transport that checks its
    /// connection by sending itself a message sends it and waits for ``deliver(_:)`` to return
    /// ``Delivery/ownHeartbeat(_:)`` with that number. Other instances ignore it.
    ///
    /// ```swift
    /// let (payload, number) = inbox.heartbeat()
    /// ```
    public func heartbeat() -> (payload: String, number: UInt64) {
        let number = state.withLock { state in
            state.heartbeatsSent += 1
            return state.heartbeatsSent
        }
        return (
            Envelope.heartbeat(origin: core.origin, number: number, format: core.format, signer: core.authenticator),
            number
        )
    }

    /// Forgets which (origin, sequence) pairs were delivered, for a durable consumer whose cursor
    /// an operator moved (``cursorReset(consumer:to:again:skipped:)``): what it reads next may
    /// repeat them on purpose, or skip some, as announced.
    func forgetDelivered() {
        state.withLock { $0.history = ReceiveHistory(window: $0.history.window, streams: $0.history.streams) }
    }

    /// Counts no gap at each origin's next event read from the store (duplicates are still
    /// dropped), for a durable consumer whose skipped events are accounted for otherwise: another
    /// bridge of the consumer handled them (it took the lease since this one last read), or
    /// retention deleted them (reported as `expired`). O(1).
    func storeSkipped() {
        state.withLock { $0.history.forgiveGaps() }
    }

    /// Forgets the listening state, for a new ``RemoteBridge/run()``.
    func reset() {
        state.withLock { state in
            state.hasListened = false
            state.interruptedAt = nil
        }
    }
}
