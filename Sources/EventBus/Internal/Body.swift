import Dispatch

/// What a subscription does with an event, built by the maker: where the handler runs, and the
/// handler in the shape `next` was given. Only valid pairs exist: a main-actor handler only ever
/// runs on the main actor.
enum Body<E: Event>: Sendable {
    /// On the dispatching thread, before `dispatch` returns.
    case immediate(Callback<E>)
    /// Asynchronously on the queue, in dispatch order when it is serial.
    case queue(DispatchQueue, Callback<E>)
    /// On the main actor: at once on the main queue, otherwise enqueued on it in dispatch order.
    case mainActor(MainActorCallback<E>)

    /// Whether deliveries, and so the owner's last release by the bus, happen on the main queue.
    var runsOnMain: Bool {
        switch self {
        case .immediate: false
        case .queue(let queue, _): isMainQueue(queue)
        case .mainActor: true
        }
    }
}

/// A nonisolated handler: `next { event in }` or `next { owner, event in }`.
enum Callback<E: Event>: Sendable {
    case event(@Sendable (E) -> Void)
    /// Called with the owner, retained for the call.
    case ownerAndEvent(@Sendable (AnyObject, E) -> Void)
}

/// A `@MainActor` handler: `onMainActor().next { event in }` or `{ owner, event in }`.
enum MainActorCallback<E: Event>: Sendable {
    case event(@MainActor @Sendable (E) -> Void)
    /// Called with the owner, retained for the call.
    case ownerAndEvent(@MainActor @Sendable (AnyObject, E) -> Void)
}

/// What one delivery did.
enum Outcome: Equatable {
    /// The handler ran.
    case delivered
    /// The handler will run on its queue (if the subscription is still live then).
    case enqueued
    /// The subscription had ended: nothing ran.
    case ended
    /// The owner is gone: nothing ran, and the subscription is to be reclaimed.
    case ownerGone
}
