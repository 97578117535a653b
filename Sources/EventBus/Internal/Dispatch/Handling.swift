import Dispatch

/// What a maker's finisher asks for: where the handler runs, and the handler. ``SubscriberMaker``'s
/// `register` turns it into the subscription's ``Body``, with the ``MailboxLane`` of a delivery
/// that leaves the dispatching thread (in the bus's mailbox of its queue or actor, bounded by the
/// maker's ``EventBuffering``).
enum Handling<E: Sendable> {
    /// On the dispatching thread.
    case immediate(Callback<E>)
    /// On `queue` (``SubscriberMaker/atQueue(_:)``).
    case queue(DispatchQueue, Callback<E>)
    /// On the main actor.
    case mainActor(MainActorHandler<E>)
    /// On the owner, an actor: the lane's runner, and how to find the actor's mailbox (`nil` when
    /// the actor is already gone).
    case isolated(MailboxLane<E>.Runner, mailbox: (MailboxDirectory) -> Mailbox?)

    /// A handler isolated to the maker's owner, an `A` (`owner`, held weakly by the maker).
    static func isolated<A: Actor>(
        to owner: AnyObject?, as _: A.Type, _ handler: @escaping @Sendable (isolated A, E) throws -> Void
    ) -> Handling<E> {
        weak let owner = owner
        return .isolated(MailboxLane.isolated(handler)) { directory in
            // The owner of an `isolated(to:)` maker is only ever an `A` (its `Owner`): the cast
            // cannot fail, and is checked (once per subscription, not per delivery).
            guard let actor = owner else { return nil }
            return directory.mailbox(for: actor as! A)
        }
    }

    /// The body: `self` with its lane, gated if the subscription replays sticky events (see
    /// ``MailboxLane``); `nil` if an actor owner is already gone.
    func body(in core: BusCore, buffering: EventBuffering, replays: Bool) -> Body<E>? {
        switch self {
        case .immediate(let callback):
            return .immediate(callback)
        case .queue(let queue, let callback):
            let mailbox = core.mailboxes.mailbox(for: queue)
            return .enqueued(
                MailboxLane(mailbox: mailbox, buffering: buffering, runner: .callback(callback), gated: replays))
        case .mainActor(let handler):
            let mailbox = core.mailboxes.mailbox(for: DispatchQueue.main)
            return .mainActor(
                handler,
                MailboxLane(mailbox: mailbox, buffering: buffering, runner: .mainActor(handler), gated: replays))
        case .isolated(let runner, let find):
            guard let mailbox = find(core.mailboxes) else { return nil }
            return .enqueued(MailboxLane(mailbox: mailbox, buffering: buffering, runner: runner, gated: replays))
        }
    }
}
