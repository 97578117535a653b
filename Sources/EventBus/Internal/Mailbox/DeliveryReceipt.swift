/// What one delivery that left the dispatching thread owes when it is over, whatever its end (its
/// handler ran, it was dropped, its subscription ended, its owner or its bus went, its stream was
/// cancelled): the in-flight ticket ``BusCore/deliveryEnqueued()`` gave it, the context captured at
/// its dispatch (restored around the handler), and the `.untilDelivered` hold it may finish.
///
/// **Exactly once, and which half the compiler checks.** The receipt is `~Copyable` and lives in
/// storage the drain owns (a ``MailboxLane``'s ``ChunkedQueue``), so it cannot be duplicated, and
/// ``finish(ranHandler:)`` consumes it: *at most once* is checked by the compiler. *At least once*
/// is its `deinit`, which finishes the hold whatever path drops the receipt (a drop, a lane freed
/// with deliveries in it): the runtime guarantees it. The ticket, which the drain finishes for a
/// whole batch at once (see ``MailboxLane``), is read from every receipt the lane takes out.
struct DeliveryReceipt: ~Copyable {
    /// The `.untilDelivered` hold the delivery finishes, `nil` for most.
    let hold: StickyHold?
    /// The dispatcher's context, `nil` without a context propagator.
    let context: CapturedContext?
    /// The in-flight ticket (the generation it was counted in); streams' deliveries are not counted.
    let ticket: InFlightTicket
    /// Whether a handler ran for the event: what finishing the hold reports.
    private var ranHandler = false
    /// Whether the hold is the delivery's to finish: not for one dropped before it was enqueued
    /// (its dispatch did not count it, see ``abandon()``).
    private var finishesHold = true

    init(hold: StickyHold?, context: CapturedContext?, ticket: InFlightTicket) {
        self.hold = hold
        self.context = context
        self.ticket = ticket
    }

    /// Finishes the delivery: `ranHandler` says whether its handler ran (an `.untilDelivered`
    /// event is let go of only then; otherwise it stays kept for the next taker).
    consuming func finish(ranHandler: Bool) {
        self.ranHandler = ranHandler
    }

    /// Ends a delivery dropped before it was enqueued: the dispatch that made it counts it as not
    /// enqueued, so it settles the hold itself (an `.untilDelivered` event stays kept).
    consuming func abandon() {
        finishesHold = false
    }

    deinit {
        if finishesHold, let hold { hold.container.finishHolding(hold, received: ranHandler) }
    }
}

/// The in-flight generation a delivery was counted in (see ``InFlightDeliveries``), or none.
enum InFlightTicket: UInt8 {
    case none, even, odd
}

/// A stream's delivery as its consumer takes it: the event and its receipt. (A lane keeps the two
/// in separate queues, see ``MailboxLane``.)
struct MailboxEntry<E>: ~Copyable {
    let event: E
    var receipt: DeliveryReceipt
}
