// The finisher of the style whose handlers are isolated to the owning actor (`isolated(to:)`): one
// `next`. Its handlers run after the dispatch, so its `handle` is unavailable (in
// `SubscriberMaker+Unavailable.swift`).

extension SubscriberMaker where Delivery == EventDelivery.Isolated, Owner: Actor {
    /// Registers `handler`, isolated to the owning actor, which it receives with each event, and
    /// returns the subscription's token (which you may drop: the actor ends the subscription).
    ///
    /// Runs on the actor, after the dispatch, one event at a time in dispatch order; never once the
    /// token is disposed or the actor is gone, enqueued deliveries included. The handler is
    /// `@Sendable`: it captures no non-Sendable state, and uses the actor it is given. If the
    /// actor is already gone, nothing is registered and the returned token is already disposed.
    /// An error it throws goes to ``EventConfigurable/handlerErrorHandler``, called on the actor.
    ///
    /// ```swift
    /// actor Presence {
    ///     var online: Set<String> = []
    ///     func start(on bus: EventBus) {
    ///         bus.on(LoginEvent.self).isolated(to: self).next { presence, event in
    ///             presence.online.insert(event.userID)
    ///         }
    ///     }
    /// }
    /// ```
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (isolated Owner, E) throws -> Void
    ) -> EventToken {
        register(.isolated(to: owner, as: Owner.self, handler), at: CallSite(fileID: file, line: line))
    }
}
