import Dispatch

/// The deliveries of one bus waiting for one target — a serial queue (the main queue included), an
/// actor, or a stream's consumer — in one FIFO, and the drain that runs them there (DESIGN §15).
///
/// **Shape.** Each subscription has a typed ``MailboxLane`` holding its events; the mailbox holds the
/// order across its lanes as runs (a lane and how many of its next deliveries come now), so a
/// backlog of one subscription costs one run however long it is, and no event is boxed. A dispatch
/// enqueues under the mailbox's lock (O(1), no user code) and starts a drain if none is under way.
/// One drain at a time: a queue job, or a task that hops onto the actor. It runs one *batch* —
/// segments of the front lane's deliveries, in order, those waiting when it started (an actor's:
/// at most ``batchLimit``, or until ``batchTime`` passed) — then ends (the queue or the actor runs
/// its other work, the pool thread is free); the next batch comes behind the work already queued
/// (see ``drain()``). Before each handler the lane checks that the subscription is live (the dispose
/// guarantee).
///
/// **Order.** One mailbox per (target, bus): the deliveries of one dispatch run in the bus's order,
/// and successive dispatches in dispatch order, across every subscription of that bus on that
/// target. Not ordered: deliveries of different buses (every chain node is a bus), and of different
/// targets (two actors sharing an executor, two queues targeting one).
final class Mailbox: @unchecked Sendable {
    // @unchecked Sendable: `state` is behind its lock; the rest is immutable.

    /// Where the drain runs.
    enum Target {
        /// A job on the queue (serial in effect: one batch at a time).
        case queue(DispatchQueue)
        /// A task on the actor (``ActorHop`` knows its type).
        case actor(ActorHop)
        /// A stream's consumer, which takes the deliveries itself: no drain.
        case stream
    }

    /// The next deliveries of one lane, in the mailbox's order.
    struct Run {
        let lane: MailboxLaneBase
        /// The subscription's node the deliveries were made to (siblings of a multi-key
        /// subscription share the lane; any of them runs it).
        let node: SubscriptionNode
        var count: Int
    }

    /// What the lock guards: the order of the lanes' deliveries, and the drain's state. The lanes'
    /// own storage is guarded by this lock too (``MailboxLane`` touches it only in ``withState(_:)``).
    struct State {
        let order = ChunkedQueue<Run>()
        /// The sum of the runs' counts: the deliveries waiting, as the order counts them.
        var queued = 0
        /// Whether a drain is scheduled (a queue job or a task) and has not started yet: an
        /// enqueue schedules one only if none is.
        var scheduled = false
        /// Whether a drain is running, and whether another asked to run meanwhile (on a
        /// concurrent queue, or for a gone actor): the running one runs again instead.
        var running = false
        var rerun = false
        /// The highest priority of the deliveries waiting (actor targets only), as a
        /// ``TaskPriority``'s raw value, 0 for none. (Not a `TaskPriority`: its layout is resilient,
        /// and every enum or optional holding one goes through runtime witnesses.)
        var waitingPriority: UInt8 = 0
        /// The drain task under way and its priority (actor targets only), to escalate it.
        var drainTask: Task<Void, Never>?
        var drainPriority: UInt8 = 0

        /// Under the lock, after an enqueue: `nil` if a drain is already scheduled (or, unless
        /// `evenWhileRunning`, running: it schedules the next when it ends); otherwise the priority
        /// to schedule one at (0: unspecified).
        mutating func schedulesDrain(evenWhileRunning: Bool = true) -> UInt8? {
            guard !scheduled, evenWhileRunning || !running else { return nil }
            scheduled = true
            defer { waitingPriority = 0 }
            return waitingPriority
        }
    }

    /// The most deliveries one batch runs before it leaves the target.
    static let batchLimit = 256
    /// The longest a batch runs before it leaves the target, in nanoseconds (checked between
    /// segments: a segment of slow handlers may run past it).
    static let batchTime: UInt64 = 1_000_000
    /// The most deliveries a lane hands the drain under one lock.
    static let segmentLimit = 8

    let target: Target
    private let state = Locked(State())
    /// Where the in-flight tickets of this bus are counted.
    let inFlight: InFlightDeliveries
    /// The directory this mailbox is filed in (it removes itself when it goes), and its key there.
    private let directory: MailboxDirectory?
    private let key: ObjectIdentifier?

    init(target: Target, inFlight: InFlightDeliveries, directory: MailboxDirectory?, key: ObjectIdentifier?) {
        self.target = target
        self.inFlight = inFlight
        self.directory = directory
        self.key = key
    }

    deinit {
        if let directory, let key { directory.remove(key, ifItIs: ObjectIdentifier(self)) }
    }

    /// Whether deliveries run on the main queue (the owner's last release by the bus happens there).
    var runsOnMain: Bool {
        if case .queue(let queue) = target { return isMainQueue(queue) }
        return false
    }

    /// Whether enqueueing records the enqueuing task's priority (for the drain's).
    var tracksPriority: Bool {
        if case .actor = target { return true }
        return false
    }

    /// Runs `body` under the mailbox's lock. `body` runs no user code and releases nothing that
    /// could be a last reference.
    @inline(__always)
    func withState<R>(_ body: (inout State) -> R) -> R {
        state.withLock(body)
    }

    /// Under the lock, once `scheduled` was set: a queue's job is submitted now, so that it is on
    /// the queue before any enqueue that relies on it returns (a block enqueued on the queue after a
    /// `dispatch` returned then runs after that dispatch's delivery). Submitting runs no user code.
    /// Returns the priority of a drain still to start after unlocking (an actor's), or `nil`.
    func scheduleUnderLock(priority: UInt8) -> UInt8? {
        guard case .queue(let queue) = target else { return priority }
        queue.async { self.runQueueJob() }
        return nil
    }

    /// A queue's job: a drain.
    private func runQueueJob() {
        if let next = drain() { startDrain(priority: next) }
    }

    /// Starts a drain (the caller set `scheduled` under the lock) at `priority` (actors only).
    func startDrain(priority: UInt8) {
        switch target {
        case .queue(let queue):
            queue.async { self.runQueueJob() }
        case .actor(let hop):
            // The next batch is scheduled after the hop returned, with the actor let go of: a
            // batch's hold on it must not keep it alive for the next one (which reads it again).
            let task = Task.detached(priority: priority == 0 ? nil : TaskPriority(rawValue: priority)) {
                if let next = await hop.run({ self.drain() }) { self.startDrain(priority: next) }
            }
            withState { state in
                state.drainTask = task
                state.drainPriority = priority
            }
        case .stream:
            break
        }
    }

    /// Raises the scheduled or running drain's priority to `priority` if it is lower (actors).
    func escalate(to priority: UInt8) {
        let task: Task<Void, Never>? = withState { state in
            guard let task = state.drainTask, state.drainPriority < priority else { return nil }
            state.drainPriority = priority
            return task
        }
        guard let task else { return }
        if #available(macOS 26, iOS 26, watchOS 26, tvOS 26, visionOS 26, *) {
            task.escalatePriority(to: TaskPriority(rawValue: priority))
        }
    }

    /// A drain, where the target runs deliveries (on the queue, or isolated to the actor): one
    /// batch, run again if another drain asked to run meanwhile; then, if deliveries are left and
    /// no drain is scheduled, returns the priority to schedule the next at (the caller does, with
    /// ``startDrain(priority:)``, once it left the target).
    ///
    /// **A queue's batch** runs the deliveries waiting when it starts, no more: each enqueue made
    /// while it runs schedules the next job, so a block enqueued on the queue after a `dispatch`
    /// returned runs after that dispatch's delivery, as with one block per delivery.
    /// **An actor's batch** runs the deliveries waiting when it starts too, and stops sooner after
    /// ``batchLimit`` of them or ``batchTime``; the next one starts behind the work already queued:
    /// the actor runs its other work in between. A delivery enqueued during a batch runs in a later
    /// one, which reads the owner again: the batch's hold on the actor keeps it alive for the
    /// deliveries that were waiting, not for those its handlers cause.
    func drain() -> UInt8? {
        let proceeds = withState { state in
            state.scheduled = false
            guard !state.running else {
                state.rerun = true
                return false
            }
            state.running = true
            return true
        }
        guard proceeds else { return nil }
        var tickets = TicketTally()
        var runsAgain = true
        while runsAgain {
            runBatch(tickets: &tickets)
            runsAgain = withState { state in
                defer { state.rerun = false }
                return state.rerun
            }
        }
        tickets.finish(in: inFlight)
        return withState { state in
            state.running = false
            state.drainTask = nil
            state.drainPriority = 0
            guard state.queued > 0, let priority = state.schedulesDrain() else { return nil }
            return scheduleUnderLock(priority: priority)
        }
    }

    /// One batch: segments of the front lane's deliveries, as ``drain()`` says.
    private func runBatch(tickets: inout TicketTally) {
        let isActor = tracksPriority
        let started = isActor ? DispatchTime.now().uptimeNanoseconds : 0
        var (budget, next) = withState { state in
            (isActor ? min(Self.batchLimit, state.queued) : state.queued, state.order.withFirst { ($0.lane, $0.node) })
        }
        while budget > 0, let (lane, node) = next {
            let (consumed, following) = lane.runSegment(of: node, in: self, limit: budget, tickets: &tickets)
            budget -= consumed
            next = following
            if isActor && DispatchTime.now().uptimeNanoseconds &- started >= Self.batchTime { break }
        }
    }
}

/// In-flight tickets finished by a drain, counted per generation and handed back once per batch.
struct TicketTally {
    private var even = 0
    private var odd = 0

    mutating func add(_ ticket: InFlightTicket) {
        switch ticket {
        case .none: break
        case .even: even += 1
        case .odd: odd += 1
        }
    }

    func finish(in inFlight: InFlightDeliveries) {
        inFlight.finished(.even, count: even)
        inFlight.finished(.odd, count: odd)
    }
}
