/// The part of a ``MailboxLane`` its ``Mailbox`` drives without knowing the event type: a segment
/// of its deliveries, its counts, and the back-pressure waiters. Everything mutable here is guarded
/// by the mailbox's lock.
class MailboxLaneBase: @unchecked Sendable {
    // @unchecked Sendable: every `var` is only touched in `mailbox.withState`; the rest is immutable.

    /// The mailbox the lane's deliveries wait in.
    let mailbox: Mailbox
    /// The subscription's bound and what happens above it.
    let buffering: EventBuffering
    /// Deliveries dropped by the bound, from the start.
    // @exclusivity(unchecked), as every `var` here: only touched under the mailbox's lock (which
    // makes the runtime's dynamic exclusivity checks redundant).
    @exclusivity(unchecked) var droppedCount = 0
    /// Senders waiting for the lane to come down to its high watermark (back-pressure only).
    var senders: [UInt64: CheckedContinuation<Void, Never>] = [:]
    /// Whether the lane is gone for good (its subscription ended and its deliveries were
    /// finished): senders never wait for it.
    var isClosed = false

    /// Where a back-pressure lane is filed for ``EventBus/send(_:)``, set once when it is filed.
    var route: (routes: BackPressureRoutes, type: ObjectIdentifier)?

    init(mailbox: Mailbox, buffering: EventBuffering) {
        self.mailbox = mailbox
        self.buffering = buffering
    }

    deinit {
        if let route { route.routes.remove(ObjectIdentifier(self), type: route.type) }
    }

    /// Deliveries waiting (under the mailbox's lock).
    var pendingCount: Int { preconditionFailure("EventBus: a lane without storage") }

    /// The high watermark above which ``EventBus/send(_:)`` waits; `nil` for every other policy.
    var highWatermark: Int? {
        if case .backPressure(let high, _) = buffering.kind { return high }
        return nil
    }

    /// Runs the next deliveries of the mailbox's front run, which is this lane's (made to `node`),
    /// at most ``Mailbox/segmentLimit`` and `limit`; returns how many of the run's count it
    /// consumed (run or skipped as dropped) and the mailbox's front run after them. Called by the
    /// mailbox's drain only, where the deliveries run.
    func runSegment(
        of node: SubscriptionNode, in mailbox: Mailbox, limit: Int, tickets: inout TicketTally
    ) -> (consumed: Int, next: (MailboxLaneBase, SubscriptionNode)?) {
        preconditionFailure("EventBus: a lane without storage")
    }

    /// `(pending, dropped)`, read under the mailbox's lock (introspection).
    var counts: (pending: Int, dropped: Int) {
        mailbox.withState { _ in (pendingCount, droppedCount) }
    }

    /// Under the mailbox's lock: the senders to resume now that the lane came down to its high
    /// watermark or closed, taken out (resume them after unlocking).
    func sendersToResume() -> [CheckedContinuation<Void, Never>] {
        guard !senders.isEmpty, let high = highWatermark, isClosed || pendingCount <= high else { return [] }
        defer { senders = [:] }
        return Array(senders.values)
    }

    /// Waits while more than the high watermark wait here (back-pressure), until the lane comes
    /// down to it, closes, or the task is cancelled. Returns at once for any other policy.
    func waitForRoom(id: UInt64) async {
        guard let high = highWatermark else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = mailbox.withState { _ in
                    guard !isClosed, pendingCount > high, !Task.isCancelled else { return false }
                    senders[id] = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            let waiting = mailbox.withState { _ in senders.removeValue(forKey: id) }
            waiting?.resume()
        }
    }

    /// Whether a sender of an event with `key` would wait here now.
    func isAboveHighWatermark() -> Bool {
        guard let high = highWatermark else { return false }
        return mailbox.withState { _ in !isClosed && pendingCount > high }
    }
}
