/// One subscription's deliveries waiting in a ``Mailbox``: its events, typed (none is boxed), in a
/// ``ChunkedQueue``, its bound (``EventBuffering``), and how they are run where the mailbox drains.
///
/// **Enqueue** (on the dispatching thread): the subscription's liveness is checked, the context is
/// captured and the in-flight ticket taken (user code and atomics, before the lock), then under the
/// mailbox's lock the bound is applied and the delivery appended, with a run in the mailbox's
/// order. What a bound drops leaves the lock and is finished after (its receipt keeps an
/// `.untilDelivered` event), counted, and traced.
///
/// **Drain** (where the target runs, one drain at a time): ``runSegment(of:in:tickets:)`` moves a
/// few deliveries out under the lock and runs them outside it, each only if the subscription is
/// still live and its owner alive.
///
/// **Unspecialized code.** The library's generic code runs unspecialized for the app's event types,
/// where naming a type made from `E` (an `Optional<E>`, a struct or enum generic over it) looks its
/// metadata up at run time. The enqueue and drain paths name none: events and receipts wait in two
/// queues kept in step (`ChunkedQueue<E>`, whose element is the lane's own parameter, and
/// `ChunkedQueue<DeliveryReceipt>`, concrete), moved through pointers, and what an enqueue decided
/// is a concrete ``LaneAction``.
///
/// **A replaying subscription** is made *gated*: until its replay is enqueued, live deliveries
/// wait in its storage with no run in the mailbox (the drain cannot run them); the replay is put
/// before them, then one run covers both. The replay is enqueued after the bus's lock is released,
/// yet runs first.
final class MailboxLane<E: Sendable>: MailboxLaneBase, @unchecked Sendable {
    // @unchecked Sendable: as MailboxLaneBase. @exclusivity(unchecked) below, as there: under the
    // mailbox's lock only.

    /// How a delivery's handler is called where the mailbox drains.
    enum Runner {
        /// A nonisolated handler, on a queue.
        case callback(Callback<E>)
        /// A main-actor handler, on the main queue.
        case mainActor(MainActorHandler<E>)
        /// A handler isolated to the owner, an actor, called with it by its nonisolated view: the
        /// lane calls it only inside its mailbox's drain, which runs isolated to that actor
        /// (``ActorHop``). See ``isolated(_:)``.
        case isolated(@Sendable (AnyObject, E) throws -> Void)
        /// A stream's: the consumer takes the deliveries (``take()``); there is no drain.
        case stream
    }

    let runner: Runner
    /// The events waiting, oldest first, and their receipts, in step.
    @exclusivity(unchecked) private var events = ChunkedQueue<E>()
    @exclusivity(unchecked) private var receipts = ChunkedQueue<DeliveryReceipt>()
    /// Deliveries a `bufferingNewest` bound dropped from the front whose runs are still in the
    /// mailbox's order: the drain skips that many of this lane's run counts.
    @exclusivity(unchecked) private var skipped = 0
    /// While a replaying subscription's replay is not enqueued yet: the live deliveries waiting
    /// with no run (see the type's comment).
    @exclusivity(unchecked) private var gated: Int?
    /// A stream's consumer waiting for a delivery, and whether the stream finished (its
    /// subscription ended).
    @exclusivity(unchecked) private var consumer: CheckedContinuation<Void, Never>?
    @exclusivity(unchecked) private var isFinished = false

    init(mailbox: Mailbox, buffering: EventBuffering, runner: Runner, gated: Bool) {
        self.runner = runner
        self.gated = gated ? 0 : nil
        super.init(mailbox: mailbox, buffering: buffering)
    }

    /// The runner of a handler isolated to an `A`.
    static func isolated<A: Actor>(_ handler: @escaping @Sendable (isolated A, E) throws -> Void) -> Runner {
        // unsafeBitCast: an `isolated` parameter is an ordinary one in the function's
        // representation and calling convention; the lane calls this view only inside a drain that
        // runs isolated to the owner, which is this `A` (the maker's `Owner`; `ActorHop.run`).
        let nonisolated = unsafeBitCast(handler, to: (@Sendable (A, E) throws -> Void).self)
        return .isolated { owner, event in try nonisolated(unsafeDowncast(owner, to: A.self), event) }
    }

    override var pendingCount: Int { events.count }

    private var isStream: Bool {
        if case .stream = runner { return true }
        return false
    }

    // MARK: Enqueue

    /// Enqueues a delivery of `event` to `node` (whose `.untilDelivered` hold, if any, it finishes
    /// when it is over), applying the bound. Returns `.enqueued`, or `.ended` if the subscription
    /// has ended or the bound dropped the event. No lock held; runs the context propagator's
    /// `capture()` (user code) before taking the mailbox's.
    func enqueue(_ event: E, holding hold: StickyHold?, for node: SubscriptionNode) -> Outcome {
        guard node.isLive else { return .ended }
        let core = node.container
        let priority = mailbox.tracksPriority ? Task.currentPriority.rawValue : 0
        var receipt: DeliveryReceipt? = DeliveryReceipt(
            hold: hold, context: core.captureContext(), ticket: isStream ? .none : core.deliveryEnqueued())
        var dropped: DeliveryReceipt?
        let action = mailbox.withState { state -> LaneAction in
            if let dropsNew = dropsOnEnqueue() {
                droppedCount += 1
                if dropsNew {
                    dropped = receipt.take()
                    return .dropped
                }
                events.removeFirst()
                dropped = receipts.popFirst()
                // The oldest had a run in the mailbox's order, or, gated, was counted as held.
                if !isStream {
                    if let held = gated { gated = held - 1 } else { skipped += 1 }
                }
            }
            events.append(event)
            // `receipt` is set: it was taken only above, for a drop, which returned.
            receipts.append(receipt.take()!)
            return record(in: &state, node: node, count: 1, priority: priority)
        }
        #if DEBUG
            core.offeredDeliveries.add(1)
        #endif
        if let dropped { drop(dropped, node: node, wasEnqueued: action != .dropped) }
        return act(on: action)
    }

    /// Under the lock, before appending: `nil` to append; `true` to drop the new delivery; `false`
    /// to drop the oldest waiting and append.
    private func dropsOnEnqueue() -> Bool? {
        switch buffering.kind {
        case .unbounded: return nil
        case .newest(let limit):
            guard events.count >= limit else { return nil }
            return limit == 0
        case .oldest(let limit), .backPressure(_, let limit):
            return events.count >= limit ? true : nil
        }
    }

    /// Under the lock, after appending `count` deliveries to `node`: records them in the mailbox's
    /// order (or, gated, only counts them) and says what to do after unlocking.
    private func record(
        in state: inout Mailbox.State, node: SubscriptionNode, count: Int, priority: UInt8
    ) -> LaneAction {
        if let gated {
            self.gated = gated + count
            return .enqueued
        }
        if isStream {
            return consumer == nil ? .enqueued : .wake
        }
        let extended = state.order.withLast { run -> Bool in
            guard run.lane === self && run.node === node else { return false }
            run.count += count
            return true
        }
        if extended != true { state.order.append(Mailbox.Run(lane: self, node: node, count: count)) }
        state.queued += count
        if priority > state.waitingPriority { state.waitingPriority = priority }
        // A queue's running drain takes only what waited when it started: an enqueue meanwhile
        // schedules the next job. An actor's schedules the next itself when it ends, after letting
        // go of the actor.
        if let drainPriority = state.schedulesDrain(evenWhileRunning: !mailbox.tracksPriority) {
            return mailbox.scheduleUnderLock(priority: drainPriority).map { .startDrain($0) } ?? .enqueued
        }
        return priority != 0 ? .escalate(priority) : .enqueued
    }

    /// After unlocking: starts the drain, raises its priority, or wakes the stream's consumer.
    private func act(on action: LaneAction) -> Outcome {
        switch action {
        case .enqueued: break
        case .startDrain(let priority): mailbox.startDrain(priority: priority)
        case .escalate(let priority): mailbox.escalate(to: priority)
        case .wake: wakeConsumer()
        case .dropped: return .ended
        }
        return .enqueued
    }

    /// Finishes a delivery the bound dropped (outside the lock): its ticket, its receipt (an
    /// `.untilDelivered` event stays kept), and the count and trace of the drop. `wasEnqueued`: it
    /// waited (the oldest, dropped for a new one); otherwise it was the new one, which its dispatch
    /// counts as not enqueued.
    private func drop(_ receipt: consuming DeliveryReceipt, node: SubscriptionNode, wasEnqueued: Bool) {
        node.container.inFlight.finished(receipt.ticket)
        if wasEnqueued { receipt.finish(ranHandler: false) } else { receipt.abandon() }
        node.container.noteDropped(from: node, type: E.self, buffering: buffering)
    }

    // MARK: Replay

    /// Enqueues a replaying subscription's replay (`node` is its primary), before the live
    /// deliveries that reached it since it was registered, and lifts the gate. `holds[i]` is the
    /// `.untilDelivered` hold of `events[i]`, if any. Returns each replayed event's outcome. No
    /// lock held.
    func enqueueReplay(_ events: [E], holds: [StickyHold?], to node: SubscriptionNode) -> [Outcome] {
        guard node.isLive else {
            mailbox.withState { state in liftGate(in: &state, node: node) }.map { _ = act(on: $0) }
            return events.map { _ in .ended }
        }
        let core = node.container
        let context = events.isEmpty ? nil : core.captureContext()
        // Last event first: prepended in that order, the replay keeps its order, ahead of the
        // live deliveries.
        let reversed = ChunkedQueue<DeliveryReceipt>()
        for hold in holds.reversed() {
            let ticket = isStream ? InFlightTicket.none : core.deliveryEnqueued()
            reversed.append(DeliveryReceipt(hold: hold, context: context, ticket: ticket))
        }
        let priority = mailbox.tracksPriority ? Task.currentPriority.rawValue : 0
        let enqueued = mailbox.withState { state -> LaneAction? in
            for event in events.reversed() { self.events.prepend(event) }
            while let receipt = reversed.popFirst() { receipts.prepend(receipt) }
            return liftGate(in: &state, node: node, adding: events.count, priority: priority)
        }
        #if DEBUG
            core.offeredDeliveries.add(events.count)
        #endif
        if let enqueued { _ = act(on: enqueued) }
        // A replay is not bounded: it is what the subscriber asked for, at most the kept events.
        return events.map { _ in .enqueued }
    }

    /// Under the lock: lifts the gate, recording the replay (`adding`) and the live deliveries it
    /// held back as one run.
    private func liftGate(
        in state: inout Mailbox.State, node: SubscriptionNode, adding replayed: Int = 0, priority: UInt8 = 0
    ) -> LaneAction? {
        let held = gated ?? 0
        gated = nil
        guard held + replayed > 0 else { return nil }
        return record(in: &state, node: node, count: held + replayed, priority: priority)
    }

    // MARK: Drain

    override func runSegment(
        of node: SubscriptionNode, in mailbox: Mailbox, limit: Int, tickets: inout TicketTally
    ) -> (consumed: Int, next: (MailboxLaneBase, SubscriptionNode)?) {
        // The lane's node is a `Subscription<E>`: only `Subscription` makes lanes of `E`.
        let node = unsafeDowncast(node, to: Subscription<E>.self)
        return withUnsafeTemporaryAllocation(of: E.self, capacity: Mailbox.segmentLimit) { taken in
            withUnsafeTemporaryAllocation(of: DeliveryReceipt.self, capacity: Mailbox.segmentLimit) { receipts in
                var resumed: [CheckedContinuation<Void, Never>] = []
                let (count, consumed, next) = mailbox.withState { state in
                    let (count, consumed) = takeSegment(from: &state, into: taken, receipts, limit: limit)
                    resumed = sendersToResume()
                    return (count, consumed, state.order.withFirst { ($0.lane, $0.node) })
                }
                for sender in resumed { sender.resume() }
                run(count, taken, receipts, to: node, tickets: &tickets)
                return (consumed, next)
            }
        }
    }

    /// Under the lock: moves up to a segment of this lane's deliveries (the front run's, at most
    /// `limit`) into `events` and `receipts`, skipping those a bound dropped, and pops the run when
    /// it is done. Returns how many it moved, and how many of the run's count it consumed (skips
    /// included).
    private func takeSegment(
        from state: inout Mailbox.State, into events: UnsafeMutableBufferPointer<E>,
        _ receipts: UnsafeMutableBufferPointer<DeliveryReceipt>, limit: Int
    ) -> (taken: Int, consumed: Int) {
        let counts = state.order.withFirst { run -> (Int, Int) in
            let skipping = min(skipped, run.count)
            skipped -= skipping
            run.count -= skipping
            let taken = min(run.count, events.count, self.events.count, max(1, limit))
            for index in 0..<taken {
                self.events.moveFirst(to: events.baseAddress.unsafelyUnwrapped + index)
                self.receipts.moveFirst(to: receipts.baseAddress.unsafelyUnwrapped + index)
            }
            run.count -= taken
            return (taken, skipping + taken)
        }
        let (taken, consumed) = counts ?? (0, 0)
        state.queued -= consumed
        // The run popped here is released under the lock, but never for the last time: the drain
        // holds its lane and node.
        if state.order.withFirst({ $0.count == 0 }) == true { _ = state.order.popFirst() }
        return (taken, consumed)
    }

    /// Runs the `count` deliveries in `events` and `receipts` (moving them out), each if `node` is
    /// still live and its owner alive, with its dispatcher's context restored; finishes every
    /// receipt, and reclaims the subscription once if its owner was found gone.
    private func run(
        _ count: Int, _ events: UnsafeMutableBufferPointer<E>, _ receipts: UnsafeMutableBufferPointer<DeliveryReceipt>,
        to node: Subscription<E>, tickets: inout TicketTally
    ) {
        guard count > 0 else { return }
        var ownerGone = false
        // An actor owner is loaded once for the segment (the drain runs isolated to it).
        let owner: AnyObject? = if case .isolated = runner { node.owner } else { nil }
        for index in 0..<count {
            let event = events.baseAddress.unsafelyUnwrapped + index
            let receipt = (receipts.baseAddress.unsafelyUnwrapped + index).move()
            tickets.add(receipt.ticket)
            var outcome = Outcome.ended
            if node.isLive {
                outcome = node.container.withContext(receipt.context, node.contextDelivery(event.pointee)) {
                    call(event.pointee, node: node, owner: owner)
                }
            }
            event.deinitialize(count: 1)
            if outcome == .ownerGone { ownerGone = true }
            if !outcome.ranHandler { node.container.noteEndedUnrun() }
            receipt.finish(ranHandler: outcome.ranHandler)
        }
        if ownerGone { node.container.reclaim(CollectionOfOne(node.handle)) }
    }

    /// Calls the handler for `event` as the runner says.
    @inline(__always)
    private func call(_ event: E, node: Subscription<E>, owner: AnyObject?) -> Outcome {
        switch runner {
        case .callback(let callback):
            return node.call(callback, event)
        case .mainActor(let handler):
            return node.callOnMainQueue(handler, event)
        case .isolated(let handler):
            guard let owner else { return .ownerGone }
            do {
                try handler(owner, event)
            } catch {
                node.report(error, type: E.self)
            }
            return .delivered
        case .stream:
            return .ended
        }
    }

    // MARK: Stream

    /// A stream's next delivery: the oldest waiting, or, when none waits, `nil` once the stream
    /// finished or the task is cancelled; otherwise waits for one.
    func take() async -> MailboxEntry<E>? {
        while true {
            if Task.isCancelled { return nil }
            var entry: MailboxEntry<E>?
            var resumed: [CheckedContinuation<Void, Never>] = []
            let (took, finished) = mailbox.withState { _ in
                // Gated, the stream's live events wait behind its replay (see the type's comment).
                if gated == nil, let event = events.popFirst(), let receipt = receipts.popFirst() {
                    entry = MailboxEntry(event: event, receipt: receipt)
                }
                let took = entry != nil
                if took { resumed = sendersToResume() }
                return (took, isFinished)
            }
            for sender in resumed { sender.resume() }
            if took { return entry.take() }
            if finished { return nil }
            await waitForDelivery()
        }
    }

    /// Suspends until a delivery is enqueued, the stream finishes, or the task is cancelled.
    private func waitForDelivery() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = mailbox.withState { _ in
                    guard events.isEmpty || gated != nil, !isFinished, !Task.isCancelled else { return false }
                    consumer = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            wakeConsumer()
        }
    }

    private func wakeConsumer() {
        let waiting = mailbox.withState { _ in
            defer { consumer = nil }
            return consumer
        }
        waiting?.resume()
    }

    /// Finishes the stream (its subscription ended): the consumer takes what is buffered, then
    /// `nil`.
    func finishStream() {
        mailbox.withState { _ in isFinished = true }
        wakeConsumer()
    }

    /// Ends a cancelled stream's buffered deliveries unrun (counted) and frees their storage: the
    /// storage is swapped out under the lock (O(1)) and emptied after.
    func discardStream(of core: BusCore) {
        var discardedEvents = ChunkedQueue<E>()
        var discardedReceipts = ChunkedQueue<DeliveryReceipt>()
        let resumed = mailbox.withState { _ in
            isFinished = true
            isClosed = true
            swap(&events, &discardedEvents)
            swap(&receipts, &discardedReceipts)
            return sendersToResume()
        }
        for sender in resumed { sender.resume() }
        withExtendedLifetime(discardedEvents) {}
        while let receipt = discardedReceipts.popFirst() {
            core.noteEndedUnrun()
            receipt.finish(ranHandler: false)
        }
    }
}

/// What an enqueue decided under the lock, for after unlocking: plain values (not nested in the
/// generic lane, where a type is generic too and looked up at run time in unspecialized code; and
/// no payload of a resilient type, such as a continuation or a `TaskPriority`, whose enum would be
/// handled by runtime witnesses).
enum LaneAction: Equatable {
    case enqueued
    /// Schedule a drain at this priority (a `TaskPriority`'s raw value, 0 for unspecified).
    case startDrain(UInt8)
    /// Raise the drain's priority to this one.
    case escalate(UInt8)
    /// Wake the stream's consumer, which waits for a delivery.
    case wake
    case dropped
}
