import Dispatch

/// What a subscription does with an event, built by the maker: where the handler runs, and the
/// handler in the shape `next` or `handle` was given. Only valid pairs exist: a main-actor handler
/// only ever runs on the main actor, an actor-isolated one on its actor, and only handlers called
/// within the dispatch can stop it (synchronous ones, and the main-actor `handle` of a main-actor
/// chain, whose posts run on the main queue).
///
/// Every delivery that leaves the dispatching thread goes through a ``MailboxLane`` (DESIGN §15).
enum Body<E: Sendable>: Sendable {
    /// On the dispatching thread, before `dispatch` returns.
    case immediate(Callback<E>)
    /// Enqueued in the lane's mailbox and run where it drains: a queue (`atQueue`) or an actor
    /// (`isolated(to:)`).
    case enqueued(MailboxLane<E>)
    /// On the main actor: at once on the main queue, otherwise enqueued in the lane (the main
    /// queue's mailbox) in dispatch order.
    case mainActor(MainActorHandler<E>, MailboxLane<E>)
    /// Into a stream's lane, which its consumer takes from; the feed finishes the stream when the
    /// bus lets go of the subscription.
    case stream(EventStreamFeed<E>)

    /// Whether a delivery made on this thread calls the handler now (rather than enqueueing it).
    var deliversNow: Bool {
        switch self {
        case .immediate: true
        case .enqueued, .stream: false
        case .mainActor: isOnMainQueue
        }
    }

    /// Whether deliveries, and so the owner's last release by the bus, happen on the main queue.
    var runsOnMain: Bool {
        switch self {
        case .immediate, .stream: false
        case .enqueued(let lane): lane.mailbox.runsOnMain
        case .mainActor: true
        }
    }

    /// The lane of a body that enqueues, `nil` for a synchronous one.
    var lane: MailboxLane<E>? {
        switch self {
        case .immediate: nil
        case .enqueued(let lane), .mainActor(_, let lane): lane
        case .stream(let feed): feed.lane
        }
    }
}

/// A nonisolated handler.
enum Callback<E: Sendable>: Sendable {
    /// `next { event in }` with no owner: the commonest shape, called with nothing around it.
    case event(@Sendable (E) -> Void)
    /// Every other shape (owner-passing, throwing, `handle`), as the maker wrapped it: called with
    /// the owner (retained for the call; `nil` when the subscription has none).
    case general(@Sendable (AnyObject?, E) throws -> EventPropagation)
}

/// A `@MainActor` handler, as the maker wrapped it: called with the owner (retained for the call;
/// `nil` when the subscription has none). Its ``EventPropagation`` stops the dispatch when it is
/// called within it, on the main queue (`next` returns `.continue`; only a main-actor chain's
/// makers offer `handle`); an enqueued call's is ignored.
typealias MainActorHandler<E> = @MainActor @Sendable (AnyObject?, E) throws -> EventPropagation

/// What one delivery did.
///
/// Its bits say what a dispatch counts: 1, the delivery started or was enqueued; 2, enqueued;
/// 4, the dispatch is to stop; 8, the owner is gone. A walk counts the common case (`delivered`)
/// with no branch: every other outcome but `ended` is above 1. (A struct, not an enum with raw
/// values: reading an enum's raw value goes through a table.)
struct Outcome: Equatable {
    let bits: UInt8

    /// The subscription had ended: nothing ran.
    static var ended: Outcome { Outcome(bits: 0) }
    /// The handler ran.
    static var delivered: Outcome { Outcome(bits: 1) }
    /// The handler will run on its queue (if the subscription is still live then).
    static var enqueued: Outcome { Outcome(bits: 3) }
    /// The handler ran and asked to stop the dispatch.
    static var stopped: Outcome { Outcome(bits: 5) }
    /// The owner is gone: nothing ran, and the subscription is to be reclaimed.
    static var ownerGone: Outcome { Outcome(bits: 8) }

    /// 1 if the delivery started or was enqueued, what a dispatch counts as reaching someone; else
    /// 0 (a count with no branch).
    @inline(__always)
    var reached: Int { Int(bits & 1) }

    /// Whether the delivery reached someone (``reached`` is 1).
    var isReached: Bool { reached != 0 }

    /// Whether the handler ran (reached, not enqueued): what makes an `.untilDelivered` event
    /// received.
    var ranHandler: Bool { bits & 3 == 1 }
}
