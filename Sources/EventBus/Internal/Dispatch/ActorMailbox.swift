/// The deliveries of one ``SubscriberMaker/isolated(to:)`` subscription waiting to run on its actor,
/// in the order they were enqueued: a FIFO of its own, drained by one task at a time.
///
/// A dispatch appends its delivery under the mailbox's lock (O(1): a linked node) and, if no drain
/// is under way, starts one: a `Task` that reads the owner, hops onto the actor and runs every
/// delivery waiting then, in order, with no suspension between them. Deliveries enqueued meanwhile
/// wait for the next drain, which the last one starts as a new task (the actor runs its other work
/// in between, and the owner is read again). One drain at a time is what makes the order: a `Task`
/// per event would start in any order, and so reach the actor in any order.
///
/// Before each handler the drain checks that the subscription is live (the dispose guarantee,
/// enqueued deliveries included); an owner gone when a drain starts has every waiting delivery
/// finished as not run and the subscription reclaimed. The actor is held, strongly, only while a
/// drain runs on it.
final class ActorMailbox<E: Sendable>: Sendable {
    /// Runs a drain's deliveries on `owner`, which is the subscription's actor: the one place that
    /// knows the actor's type (see ``isolated(to:_:)``).
    typealias Run = @Sendable (_ owner: AnyObject, _ drain: Drain) async -> Void

    /// The deliveries waiting, oldest first, and whether a drain is under way.
    private struct Waiting {
        var first: Pending?
        var last: Pending?
        var draining = false
    }

    private let waiting = Locked(Waiting())
    private let run: Run
    /// The actor's type, for introspection.
    let actorType: Any.Type

    private init(actorType: Any.Type, run: @escaping Run) {
        self.actorType = actorType
        self.run = run
    }

    /// A mailbox whose deliveries call `handler` isolated to the subscription's owner, an `A`.
    static func isolated<A: Actor>(
        to _: A.Type, _ handler: @escaping @Sendable (isolated A, E) throws -> Void
    ) -> ActorMailbox<E> {
        ActorMailbox(actorType: A.self) { owner, drain in
            // The owner of an `isolated(to:)` subscription is only ever an `A` (the maker's `Owner`).
            await drain.deliver(on: unsafeDowncast(owner, to: A.self), handler)
        }
    }

    /// Enqueues a delivery of `event` to `node` (which finishes `hold` when it runs) and starts a
    /// drain if none is under way. The owner is not read here: on the dispatching thread its deinit
    /// could run.
    @inline(never)
    func enqueue(_ event: E, holding hold: StickyHold?, for node: Subscription<E>) -> Outcome {
        guard node.isLive else { return .ended }
        let pending = Pending(
            event: event, hold: hold, ticket: node.container.deliveryEnqueued(),
            context: node.container.captureContext())
        let startsDrain = waiting.withLock { waiting in
            if let last = waiting.last { last.next = pending } else { waiting.first = pending }
            waiting.last = pending
            defer { waiting.draining = true }
            return !waiting.draining
        }
        if startsDrain { startDrain(for: node) }
        return .enqueued
    }

    /// Starts a drain at the priority of the work that enqueued it. Detached: a drain runs the
    /// deliveries of any number of dispatchers, so it must not carry the task-local values of the
    /// one that started it (each delivery's context is its own: see `Pending.context`).
    private func startDrain(for node: Subscription<E>) {
        Task.detached(priority: Task.currentPriority) { await self.drain(for: node) }
    }

    /// Takes every delivery waiting and runs them on the actor, or, if it is gone, finishes them
    /// unrun; then starts the next drain if more were enqueued meanwhile.
    private func drain(for node: Subscription<E>) async {
        let taken = Drain(first: waiting.withLock(Self.takeAll), node: node)
        if let owner = node.owner {
            await run(owner, taken)
        } else {
            taken.finishUnrun()
        }
        let more = waiting.withLock { waiting in
            waiting.draining = waiting.first != nil
            return waiting.draining
        }
        if more { startDrain(for: node) }
    }

    private static func takeAll(_ waiting: inout Waiting) -> Pending? {
        defer {
            waiting.first = nil
            waiting.last = nil
        }
        return waiting.first
    }

    /// The deliveries one drain took, oldest first: run on the actor, or finished unrun.
    struct Drain: Sendable {
        let first: Pending?
        let node: Subscription<E>

        /// Calls `handler` for each delivery, in order, on `actor` (the caller is isolated to it),
        /// skipping those whose subscription has ended by then, with the context captured at its
        /// dispatch restored (see `BusCore.withContext`).
        func deliver<A: Actor>(on actor: isolated A, _ handler: (isolated A, E) throws -> Void) {
            forEach { pending in
                guard node.isLive else { return .ended }
                return node.container.withContext(pending.context, node.contextDelivery(pending.event)) {
                    do {
                        try handler(actor, pending.event)
                    } catch {
                        node.report(error, type: E.self)
                    }
                    return .delivered
                }
            }
        }

        /// Finishes every delivery as not run (the owner is gone), then reclaims the subscription:
        /// once, not once per delivery.
        func finishUnrun() {
            forEach { _ in .ended }
            node.container.reclaim(CollectionOfOne(node.handle))
        }

        /// Runs `body` for each delivery and finishes it with the outcome, unlinking as it goes (a
        /// long chain released from its head would recurse once per node).
        private func forEach(_ body: (Pending) -> Outcome) {
            var cursor = first
            while let pending = cursor {
                cursor = pending.next
                pending.next = nil
                node.finishEnqueued(body(pending), holding: pending.hold, pending.ticket)
            }
        }
    }

    /// One delivery waiting: the event, the `.untilDelivered` hold it finishes, its in-flight
    /// ticket, the context captured at its dispatch (`nil` without a propagator), and the next
    /// delivery.
    final class Pending: @unchecked Sendable {
        // @unchecked Sendable: `next` is written under the mailbox's lock while the delivery waits,
        // then only by the one drain that took it; the rest is immutable.
        let event: E
        let hold: StickyHold?
        let ticket: Bool
        let context: CapturedContext?
        var next: Pending?

        init(event: E, hold: StickyHold?, ticket: Bool, context: CapturedContext?) {
            self.event = event
            self.hold = hold
            self.ticket = ticket
            self.context = context
        }
    }
}
