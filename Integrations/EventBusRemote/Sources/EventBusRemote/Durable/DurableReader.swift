/// Reads one cursor of a ``DurableStore`` into a ``RemoteInbox``: the durable logic that is not
/// storage, the same for every store.
///
/// A reader takes its cursor's lease (standing by, reported once, while another owner holds it),
/// renews it every third of its duration apart from the handlers, and reads batches: it claims a
/// batch, reads it, hands it to the inbox (``RemoteInbox/deliverAndWait(_:subset:)``, which
/// returns once synchronous subscribers have run) and acknowledges it. It announces a previous
/// owner's unacknowledged batch as redelivered (`BridgeIssue.redelivered`), reports events that
/// retention deleted before it read them (`expired`), and holds at an event this instance cannot
/// decode (`held`: the cursor stops before it, nothing after it is delivered, and it is read again
/// at the next wake-up). A stop lets the batch in progress reach its acknowledgement, then gives
/// the lease up: a standby takes over at once and delivers nothing again.
///
/// Runs on the cooperative pool, in the task that calls ``run(into:waker:onLease:alongside:)``;
/// nothing runs under a lock but this type's own bookkeeping.
///
/// ```swift
/// let reader = DurableReader(cursor: store.cursor(DurableConsumerID("mailer"), owner: UUID()))
/// try await reader.run(into: inbox, waker: waker)   // until the task is cancelled
/// ```
public struct DurableReader<Cursor: DurableCursor>: Sendable {
    /// A place in the store's order of events.
    public typealias Position = Cursor.Position

    /// The cursor read.
    public let cursor: Cursor
    /// Batch size, lease duration and poll interval.
    public let settings: DurableReading
    /// What the reader remembers across reconnections.
    public let state: DurableReaderState<Position>
    /// Where the reader's notes go (a transport's log): standing by, holds, slow renewals.
    private let note: @Sendable (String) -> Void

    /// A reader of `cursor`; `state` is kept by the transport across reconnections.
    public init(
        cursor: Cursor, settings: DurableReading = DurableReading(),
        state: DurableReaderState<Position> = DurableReaderState(),
        note: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.cursor = cursor
        self.settings = settings
        self.state = state
        self.note = note
    }

    private var consumer: String { cursor.id.name }

    /// The epoch of the lease held now; the store's lease-lost error if none (nothing may be
    /// claimed or acknowledged unfenced).
    public var epoch: Int64 {
        get throws { try state.epoch(orThrow: cursor.leaseLost) }
    }

    // MARK: The whole run

    /// Takes the lease, calls `onLease` with its epoch, resumes from the cursor and reads every
    /// batch, then again at each wake-up or poll, until the task is cancelled (then the lease is
    /// given up once the batch in progress is acknowledged, and it returns) or the store throws.
    /// `alongside` runs while the reader reads (a lag gauge); `batch` replaces the plain batch (a
    /// store whose handlers run in the transaction that moves the cursor).
    public func run(
        into inbox: RemoteInbox, waker: DurableWaker,
        onLease: @Sendable (Int64) async throws -> Void = { _ in },
        alongside: (@Sendable () async -> Void)? = nil,
        batch custom: (@Sendable (DurableProgress<Position>) async throws -> (DurableProgress<Position>, more: Bool))? =
            nil
    ) async throws {
        let lease: DurableLease
        do {
            lease = try await takeLease(inbox, waker: waker)
        } catch {
            // Stopped while taking the lease: one that the store took as the task was cancelled is
            // given up (nothing was read), not left to lapse.
            if Task.isCancelled || error is CancellationError {
                await Task { await releaseLease(nil) }.value
            }
            throw error
        }
        var failure: (any Error)?
        do {
            try await onLease(lease.epoch)
            let progress = try await resume(inbox, continuing: lease.continuing)
            // The renewal is a task of its own, not cancelled by a stop but when the reading ends:
            // a stop waits for the batch in progress to be acknowledged, and that batch may take
            // longer than the lease. Cancelled with the stop, the renewal let the lease lapse
            // meanwhile, a standby took it over and delivered the batch again.
            let renewal = Task { try await renewLease(lease.epoch) }
            defer { renewal.cancel() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await renewal.value }
                if let alongside { group.addTask { await alongside() } }
                group.addTask {
                    defer { renewal.cancel() }
                    try await deliverBatches(from: progress, into: inbox, waker: waker, batch: custom)
                }
                defer { group.cancelAll() }
                try await group.next()
            }
        } catch {
            failure = error
        }
        if Task.isCancelled || failure is CancellationError {
            // Stopped: every batch it delivered is acknowledged (see deliverBatches); hand over.
            await Task { await releaseLease(lease.epoch) }.value
            return
        }
        if let failure { throw failure }
    }

    /// Reads from `progress` until cancelled: every batch, then waits for a wake-up or the poll
    /// interval. A batch, once claimed, runs to its acknowledgement even if the task is cancelled
    /// meanwhile (each store call is still bounded by the store): a stopped reader never leaves a
    /// batch handled but unacknowledged, nor claimed but unread.
    public func deliverBatches(
        from progress: DurableProgress<Position>, into inbox: RemoteInbox, waker: DurableWaker,
        batch custom: (@Sendable (DurableProgress<Position>) async throws -> (DurableProgress<Position>, more: Bool))? =
            nil
    ) async throws {
        var progress = progress
        while !Task.isCancelled {
            while !Task.isCancelled {
                let current = progress
                let (next, more) = try await Task {
                    if let custom { return try await custom(current) }
                    return try await batch(current, into: inbox)
                }.value
                progress = next
                if !more { break }
            }
            await waker.wait(atMost: settings.pollInterval)
        }
    }

    // MARK: The lease

    /// Takes the cursor's lease, standing by (reported once: `BridgeIssue.standingBy`) while
    /// another owner holds it; returns its epoch and whether this process held the lease just
    /// before it (a reconnection), or throws when cancelled or the store fails.
    public func takeLease(_ inbox: RemoteInbox, waker: DurableWaker) async throws -> DurableLease {
        var reported = false
        while true {
            try Task.checkCancellation()
            // Not cancelled with the task: a store call abandoned on cancellation may still take
            // the lease after the stop gave it up (a stop right after a start then left its lease
            // to lapse, and the next bridge of the consumer stood by). Finished, a lease taken is
            // held, and the stop gives it up.
            let duration = settings.leaseDuration
            if let epoch = try await Task(operation: { [cursor] in try await cursor.takeLease(for: duration) }).value {
                return DurableLease(epoch: epoch, continuing: state.tookLease(epoch))
            }
            if !reported {
                reported = true
                note("consumer \(consumer) is leased to another bridge: standing by")
                inbox.standingBy(consumer: consumer)
            }
            // A release wakes the channel's readers; a lapse is seen at the next try. Every append
            // wakes them too: tries are 100 ms apart at least, whatever the traffic.
            let tried = ContinuousClock.now
            await waker.wait(atMost: settings.leaseDuration / 3)
            let spacing = .milliseconds(100) - (ContinuousClock.now - tried)
            if spacing > .zero { try await Task.sleep(for: spacing) }
        }
    }

    /// Renews the lease of `epoch` every third of its duration until cancelled; throws the store's
    /// lease-lost error once another owner took it. A renewal that fails (a slow or broken store)
    /// is tried again until the lease would have lapsed.
    public func renewLease(_ epoch: Int64) async throws {
        var renewedAt = ContinuousClock.now
        while true {
            try await Task.sleep(until: renewedAt + settings.leaseDuration / 3)
            let attempt = ContinuousClock.now
            let renewed: Bool
            do {
                renewed = try await cursor.renewLease(epoch, for: settings.leaseDuration)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                guard ContinuousClock.now < renewedAt + settings.leaseDuration else {
                    state.setEpoch(nil)
                    throw cursor.leaseLost
                }
                note("renewing the lease of consumer \(consumer) failed (\(error)): trying again")
                try await Task.sleep(for: min(.milliseconds(50), settings.leaseDuration / 30))
                continue
            }
            guard renewed else {
                state.setEpoch(nil)
                throw cursor.leaseLost
            }
            renewedAt = attempt
        }
    }

    /// Gives the lease of `epoch` up (`nil`: whichever this process holds). Best effort: a lease
    /// not given up lapses.
    public func releaseLease(_ epoch: Int64?) async {
        state.endEpoch(epoch)
        do {
            try await cursor.releaseLease(epoch)
        } catch {
            note("releasing the lease of consumer \(consumer) failed (it lapses): \(error)")
        }
    }

    // MARK: Reading

    /// Where the lease holder reads from. `continuing`: this process held the lease before this
    /// one (it reconnected): from what it handled, acknowledged now if the stored cursor is behind
    /// it, never read again, and no claim of its own announced as a redelivery. Otherwise from the
    /// stored cursor, with the claim of a predecessor that died mid-batch to announce.
    public func resume(_ inbox: RemoteInbox, continuing: Bool) async throws -> DurableProgress<Position> {
        let stored = try await cursor.open()
        // Another bridge of the consumer held the lease since this one last read: the events it
        // handled are no gap of their origins here (a failed publish after them still is one).
        if !continuing {
            inbox.storeSkipped()
            state.recordHeld(nil)
        }
        if continuing {
            // A hold it reported is not reported again.
            var progress = DurableProgress(position: stored.position)
            progress.heldAt = state.heldAt
            if let handled = state.handled, handled > stored.position {
                try await acknowledge(handled, inbox)
                progress.position = handled
                return progress
            }
            if stored.expired > 0 { try await acknowledge(stored.position, inbox) }
            return progress
        }
        if stored.expired > 0 { try await acknowledge(stored.position, inbox) }
        let redeliverThrough = stored.claimed.flatMap { $0 > stored.position ? $0 : nil }
        // A claim kept by a reset: the events through where the consumer had acknowledged are the
        // reset's `again`; only those after it are announced as redelivered.
        return DurableProgress(
            position: stored.position, redeliverThrough: redeliverThrough,
            announced: redeliverThrough == nil ? nil : stored.announced)
    }

    /// Claims the next batch after `position` and reads it: its events (those retention deleted
    /// meanwhile missing), its claim; `nil` when there is nothing to read. The claim comes first:
    /// a cleanup that commits after it keeps the claimed events.
    public func claimAndRead(after position: Position) async throws -> (
        events: [DurableEvent<Position>], claim: DurableClaim<Position>
    )? {
        guard let claim = try await cursor.claim(after: position, limit: settings.batchSize, epoch: try epoch) else {
            return nil
        }
        let events = try await cursor.read(after: position, through: claim.last, limit: settings.batchSize)
        return (events, claim)
    }

    /// Claims, reads, delivers and acknowledges the next batch after `progress`; returns the
    /// progress and whether a full batch was read (more may follow at once).
    ///
    /// An event this instance cannot decode (the inbox holds it: a newer envelope or event
    /// version, a payload that does not decode) is never acknowledged: the cursor moves to the
    /// event before it, the claim goes back to what a previous owner may have delivered, the hold
    /// is reported once per event (`BridgeIssue.held`), and the event is read again at the next
    /// wake-up or poll, nothing after it delivered meanwhile.
    public func batch(_ progress: DurableProgress<Position>, into inbox: RemoteInbox) async throws -> (
        DurableProgress<Position>, more: Bool
    ) {
        var progress = progress
        guard let (events, claim) = try await claimAndRead(after: progress.position) else { return (progress, false) }
        // Events retention deleted since the last acknowledgement (a held event and those after it
        // among them: a hold claims nothing), reported before the events after them are delivered,
        // so that the gaps they leave read as `expired`, not as `missed` too.
        let reported = reportExpired(claim, inbox)
        announceRedelivery(of: events, in: &progress, inbox)
        let batch =
            events.isEmpty
            ? RemoteInbox.StoredBatch(handled: 0, held: nil)
            : await inbox.deliverAndWait(events.map(\.envelope), subset: cursor.id.partition != nil)
        guard let reason = batch.held else {
            if progress.heldAt != nil {
                progress.heldAt = nil
                state.recordHeld(nil)
            }
            progress.position = claim.last
            if let through = progress.redeliverThrough, claim.last >= through { progress.redeliverThrough = nil }
            state.recordHandled(claim.last)
            try await acknowledge(claim.last, inbox, reported: reported)
            return (progress, claim.count >= settings.batchSize)
        }
        if batch.handled > 0 { progress.position = events[batch.handled - 1].position }
        if let through = progress.redeliverThrough, progress.position >= through { progress.redeliverThrough = nil }
        state.recordHandled(progress.position)
        try await acknowledge(
            progress.position, inbox, claim: .releaseTo(progress.redeliverThrough), reported: reported)
        hold(at: events[batch.handled].position, reason, in: &progress, inbox)
        return (progress, false)
    }

    /// Announces (`BridgeIssue.redelivered`) the events of `events` that a previous owner may have
    /// delivered and that were not announced yet.
    public func announceRedelivery(
        of events: [DurableEvent<Position>], in progress: inout DurableProgress<Position>, _ inbox: RemoteInbox
    ) {
        guard let through = progress.redeliverThrough else { return }
        let announced = progress.announced
        let again = events.filter { event in event.position <= through && announced.map { event.position > $0 } ?? true
        }
        if let newest = again.last {
            inbox.redelivering(consumer: consumer, count: again.count)
            progress.announced = newest.position
        }
    }

    /// Reports a hold at `position` (`BridgeIssue.held`), once per event.
    public func hold(
        at position: Position, _ reason: String, in progress: inout DurableProgress<Position>, _ inbox: RemoteInbox
    ) {
        guard progress.heldAt != position else { return }
        progress.heldAt = position
        state.recordHeld(position)
        note("consumer \(consumer) holds at \(position): \(reason)")
        inbox.held(consumer: consumer, reason: "\(DurableReader.describe(position)): \(reason)")
    }

    /// Moves the cursor to `position` (fenced by the lease) and reports the events retention
    /// deleted before this consumer read them (`BridgeIssue.expired`), but for the `reported` of
    /// them that ``reportExpired(_:_:)`` reported at the claim.
    public func acknowledge(
        _ position: Position, _ inbox: RemoteInbox, claim: DurableClaimUpdate<Position> = .keep, reported: Int = 0
    ) async throws {
        let expired = try await cursor.acknowledge(position, claim: claim, epoch: try epoch) - reported
        if expired > 0 { inbox.expired(consumer: consumer, count: expired) }
    }

    /// Reports the expired events `claim` carries (`BridgeIssue.expired`) before its batch is
    /// delivered; returns how many, for the acknowledgement (``acknowledge(_:_:claim:reported:)``),
    /// which returns them again.
    public func reportExpired(_ claim: DurableClaim<Position>, _ inbox: RemoteInbox) -> Int {
        if claim.expired > 0 { inbox.expired(consumer: consumer, count: claim.expired) }
        return max(0, claim.expired)
    }

    /// How a hold names its event: the position's own description when it has one.
    static func describe(_ position: Position) -> String {
        (position as? any CustomStringConvertible)?.description ?? "\(position)"
    }
}
