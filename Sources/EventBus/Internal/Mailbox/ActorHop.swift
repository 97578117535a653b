/// How a mailbox's drain gets onto its actor: the one place that knows the actor's type.
///
/// Holds the actor weakly (the bus never keeps an actor owner alive): a drain retains it for the
/// batch it runs on it.
class ActorHop: @unchecked Sendable {
    // @unchecked Sendable: immutable but for the subclass's weak reference, which the runtime
    // reads and writes atomically.

    /// The actor's type, for introspection.
    var actorType: Any.Type { preconditionFailure("EventBus: an actor hop without an actor") }

    /// Whether `actor` is this hop's actor (a reused address never joins a dead actor's mailbox).
    func isHop(to actor: AnyObject) -> Bool { preconditionFailure("EventBus: an actor hop without an actor") }

    /// Runs `body` isolated to the actor and returns what it returns, having let go of the actor;
    /// runs it where it is if the actor is gone (its lanes then find their owner gone and finish
    /// their deliveries unrun).
    func run(_ body: @Sendable () -> UInt8?) async -> UInt8? {
        preconditionFailure("EventBus: an actor hop without an actor")
    }

    /// A hop onto `actor`.
    static func to<A: Actor>(_ actor: A) -> ActorHop { ActorHopTo(actor) }
}

/// ``ActorHop`` for an actor of type `A`.
private final class ActorHopTo<A: Actor>: ActorHop, @unchecked Sendable {
    // @unchecked Sendable: as ActorHop.
    private weak var actor: A?

    init(_ actor: A) {
        self.actor = actor
    }

    override var actorType: Any.Type { A.self }

    override func isHop(to actor: AnyObject) -> Bool { self.actor === actor }

    override func run(_ body: @Sendable () -> UInt8?) async -> UInt8? {
        guard let actor else { return body() }
        return await Self.run(body, on: actor)
    }

    private static func run(_ body: @Sendable () -> UInt8?, on _: isolated A) -> UInt8? {
        body()
    }
}
