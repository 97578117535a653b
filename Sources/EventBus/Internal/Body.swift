import Dispatch

/// What a subscription does with an event, built by the maker: where the handler runs, and the
/// handler in the shape `next` or `handle` was given. Only valid pairs exist: a main-actor handler
/// only ever runs on the main actor, and only handlers called within the dispatch can stop it
/// (synchronous ones, and the main-actor `handle` of a main-actor chain, whose posts run on the
/// main queue).
enum Body<E: Sendable>: Sendable {
    /// On the dispatching thread, before `dispatch` returns.
    case immediate(Callback<E>)
    /// Asynchronously on the queue, in dispatch order when it is serial.
    case queue(DispatchQueue, Callback<E>)
    /// On the main actor: at once on the main queue, otherwise enqueued on it in dispatch order.
    case mainActor(MainActorHandler<E>)

    /// Whether a delivery made on this thread calls the handler now (rather than enqueueing it).
    var deliversNow: Bool {
        switch self {
        case .immediate: true
        case .queue: false
        case .mainActor: isOnMainQueue
        }
    }

    /// Whether deliveries, and so the owner's last release by the bus, happen on the main queue.
    var runsOnMain: Bool {
        switch self {
        case .immediate: false
        case .queue(let queue, _): isMainQueue(queue)
        case .mainActor: true
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
enum Outcome: Equatable {
    /// The handler ran.
    case delivered
    /// The handler ran and asked to stop the dispatch.
    case stopped
    /// The handler will run on its queue (if the subscription is still live then).
    case enqueued
    /// The subscription had ended: nothing ran.
    case ended
    /// The owner is gone: nothing ran, and the subscription is to be reclaimed.
    case ownerGone

    /// Whether a delivery started or was enqueued (what a dead event lacks).
    var reached: Bool { self == .delivered || self == .stopped || self == .enqueued }
}
