extension SubscriberMaker where Delivery == EventDelivery.Isolated, Owner: Actor {
    /// Registers `handler`, isolated to the owning actor, which it receives with each event, and
    /// returns the subscription's token (which you may drop: the actor ends the subscription).
    ///
    /// Runs on the actor, after the dispatch, one event at a time in dispatch order; never once the
    /// token is disposed or the actor is gone, enqueued deliveries included. The handler is
    /// `@Sendable`: it captures no non-Sendable state, and uses the actor it is given. If the
    /// actor is already gone, nothing is registered and the returned token is already disposed.
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
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (isolated Owner, E) -> Void
    ) -> EventToken {
        register(.isolated(to: owner, as: Owner.self, handler), at: CallSite(fileID: file, line: line))
    }

    /// Registers the throwing `handler`, isolated to the owning actor, as the non-throwing `next`
    /// does. Errors go to ``EventConfigurable/handlerErrorHandler``, called on the actor.
    ///
    /// ```swift
    /// actor Ledger {
    ///     struct Refused: Error {}
    ///     var entries: [String] = []
    ///     func start(on bus: EventBus) {
    ///         bus.on(LoginEvent.self).isolated(to: self).next { ledger, event throws in
    ///             guard !event.userID.isEmpty else { throw Refused() }
    ///             ledger.entries.append(event.userID)
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

    /// Unavailable: an actor-isolated handler runs on its actor after the dispatch has moved on,
    /// so it cannot stop it. Use `next { actor, event in … }`; to stop a dispatch, subscribe a
    /// synchronous `handle` without `isolated(to:)`.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).isolated(to: counter).next { counter, event in counter.count += 1 }
    /// ```
    @available(
        *, unavailable,
        message:
            "an actor-isolated handler runs on its actor after the dispatch, so it cannot stop it: use 'next { actor, event in … }', or a synchronous 'handle' without 'isolated(to:)'"
    )
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (isolated Owner, E) throws -> EventPropagation
    ) -> EventToken {
        register(.isolated(to: owner, as: Owner.self) { _, _ in }, at: CallSite(fileID: file, line: line))
    }
}
