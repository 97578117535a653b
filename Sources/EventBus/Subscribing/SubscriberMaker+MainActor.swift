// The finishers of the styles whose handlers are `@MainActor` (``MainActorDelivery``: the bus's
// `onMainActor()` and a main-actor node's makers): one `next` and one `handle` per owner kind.
// `handle` is offered where the style says its handlers can stop the post (``StoppingDelivery``:
// a main-actor node's makers, whose posts run on the main queue); the other `handle`, and the
// one-argument handler of an owned maker, are in `SubscriberMaker+Unavailable.swift`.

extension SubscriberMaker where Delivery: MainActorDelivery, Owner == Never {
    /// Registers the `@MainActor` `handler` and returns the subscription's token: keep it, or the
    /// subscription lasts as long as the bus.
    ///
    /// Runs on the main actor: before `dispatch` returns when dispatched on the main thread,
    /// otherwise soon after, enqueued on the main queue in dispatch order (on a
    /// ``MainActorEventNode``, always within the post, which runs on the main queue). With no
    /// owner, the subscription lives until the token is disposed (dropping the token does not end
    /// it; the compiler warns about a dropped result), a ``DisposeBag`` holding it is emptied or
    /// deallocated, or the bus is deallocated. Once `dispose()` has returned, no delivery starts,
    /// not even one already enqueued. An error it throws goes to ``EventConfigurable/handlerErrorHandler``,
    /// on the main actor.
    ///
    /// ```swift
    /// @MainActor final class SessionModel { var userID = "" }
    /// @MainActor func bind(_ model: SessionModel, to bus: EventBus) -> EventToken {
    ///     bus.on(LoginEvent.self).onMainActor().next { event in
    ///         model.userID = event.userID   // `model` is @MainActor
    ///     }
    /// }
    /// ```
    public func next(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (E) throws -> Void
    ) -> EventToken {
        register(
            .mainActor { _, event in
                try handler(event)
                return .continue
            }, at: CallSite(fileID: file, line: line))
    }

    /// Registers the `@MainActor` `handler`, which decides for each event whether the post goes on
    /// (``EventPropagation/continue``) or stops here (``EventPropagation/stop``), and returns the
    /// subscription's token: keep it, or the subscription lasts as long as its node.
    ///
    /// Offered by a ``MainActorEventNode``'s makers only (``StoppingDelivery``). Its posts always run
    /// on the main queue, so the handler is called on the main actor, synchronously within the
    /// post, and decides as a synchronous `handle` does on an ``EventNode``: `.stop` lets its node
    /// finish (the node's monitors run) and ends the event for every node above, except for
    /// `monitor()` subscribers, which still see it. After ``atQueue(_:)``, ``onMainActor()`` or
    /// ``monitor()``, and on the bus's ``onMainActor()`` makers (whose deliveries from another
    /// thread are enqueued), `handle` is a compile error. The subscription lives until the token is
    /// disposed (dropping the token does not end it), a ``DisposeBag`` holding it is emptied or
    /// deallocated, or the node is deallocated; once `dispose()` has returned it is not called. An
    /// error it throws never reaches the poster: it counts as `.continue` and goes to the node's
    /// ``EventConfigurable/handlerErrorHandler``, on the main actor.
    ///
    /// ```swift
    /// @MainActor final class Drawer { var isOpen = false }
    /// @MainActor func bind(_ drawer: Drawer, to node: MainActorEventNode) -> EventToken {
    ///     node.on(BackTapped.self).priority(.high).handle { _ in
    ///         drawer.isOpen ? .stop : .continue   // the nodes above do not see it while open
    ///     }
    /// }
    /// ```
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (E) throws -> EventPropagation
    ) -> EventToken where Delivery: StoppingDelivery {
        register(.mainActor { _, event in try handler(event) }, at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery: MainActorDelivery, Owner: AnyObject & Sendable {
    /// Registers the `@MainActor` `handler`, which receives the owner (retained for the call) with
    /// each event, and returns the subscription's token (which you may drop: the owner ends the
    /// subscription).
    ///
    /// The handler runs on the main actor, and never once the owner is gone or the token is
    /// disposed (enqueued deliveries included), so it needs no `[weak self]`: capture nothing and
    /// use `owner`. If the owner is already gone, nothing is registered and the returned token is
    /// already disposed. An error it throws goes to ``EventConfigurable/handlerErrorHandler``, on the main
    /// actor.
    ///
    /// ```swift
    /// @MainActor final class ProfileViewModel: EventSubscribing {
    ///     var title = ""
    ///     func start() {
    ///         subscribe(LoginEvent.self).onMainActor().next { owner, event in
    ///             owner.title = event.userID   // owner is this @MainActor view model
    ///         }
    ///     }
    /// }
    /// ```
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (Owner, E) throws -> Void
    ) -> EventToken {
        register(
            .mainActor { owner, event in
                try handler(passedOwner(owner), event)
                return .continue
            }, at: CallSite(fileID: file, line: line))
    }

    /// Registers the `@MainActor` `handler`, which receives the owner (retained for the call) with
    /// each event and decides whether the post goes on, as the `handle` without an owner does, and
    /// returns the subscription's token (which you may drop: the owner ends the subscription).
    ///
    /// Offered by a ``MainActorEventNode``'s makers only. Runs on the main actor, within the post;
    /// never once the owner is gone or the token is disposed, so it needs no `[weak self]`: capture
    /// nothing and use `owner`. If the owner is already gone, nothing is registered and the
    /// returned token is already disposed. An error it throws counts as
    /// ``EventPropagation/continue`` and goes to the node's
    /// ``EventConfigurable/handlerErrorHandler``, on the main actor.
    ///
    /// ```swift
    /// @MainActor final class DrawerModel {
    ///     let eventNode = MainActorEventNode(name: "Drawer")
    ///     var isOpen = false
    ///     init() {
    ///         eventNode.on(BackTapped.self).freeWith(self).handle { drawer, _ in
    ///             guard drawer.isOpen else { return .continue }
    ///             drawer.isOpen = false
    ///             return .stop   // consumed: the screen above does not pop
    ///         }
    ///     }
    /// }
    /// ```
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (Owner, E) throws -> EventPropagation
    ) -> EventToken where Delivery: StoppingDelivery {
        register(
            .mainActor { owner, event in try handler(passedOwner(owner), event) },
            at: CallSite(fileID: file, line: line))
    }
}
