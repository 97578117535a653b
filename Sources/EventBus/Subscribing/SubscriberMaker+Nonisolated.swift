// The finishers of the styles whose handlers are nonisolated (``NonisolatedDelivery``: synchronous,
// monitor, queued): one `next` and one `handle` per owner kind. `handle` is offered where the style
// says its handlers can stop the dispatch (``StoppingDelivery``); the other styles' `handle`, and
// the one-argument handler of an owned maker, are in `SubscriberMaker+Unavailable.swift`.

extension SubscriberMaker where Delivery: NonisolatedDelivery, Owner == Never {
    /// Registers `handler` and returns the subscription's token: keep it, or the subscription lasts
    /// as long as the bus.
    ///
    /// The handler runs on the dispatching thread, before `dispatch` returns, or on the
    /// ``atQueue(_:)`` queue. With no owner, the subscription lives until the token is disposed
    /// (dropping the token does not end it), a ``DisposeBag`` holding it is emptied or deallocated,
    /// or the bus is deallocated; once `dispose()` has returned the handler is not called again.
    /// The result is not discardable, so the compiler warns about a dropped token: write
    /// `_ = bus.on(…).next { … }` for a subscription meant to last as long as the bus, or bind it
    /// to an owner with ``freeWith(_:)``. `file` and `line` record where it was made; leave them to
    /// their defaults.
    ///
    /// This is the fast path of the commonest shape (a handler that cannot throw); a handler that
    /// throws takes the throwing `next` below, the same subscription.
    ///
    /// ```swift
    /// let token = bus.on(LoginEvent.self).next { event in print(event.userID) }
    /// token.dispose()
    /// ```
    @inlinable
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (E) -> Void
    ) -> EventToken {
        register(handler, at: CallSite(fileID: file, line: line))
    }

    /// Registers the throwing `handler` and returns the subscription's token: keep it, or the
    /// subscription lasts as long as the bus.
    ///
    /// As the non-throwing `next` (on the dispatching thread or the ``atQueue(_:)`` queue; no call
    /// once `dispose()` has returned); an error the handler throws never reaches the dispatcher:
    /// the other subscribers still run, and the bus hands the error to its
    /// ``EventConfigurable/handlerErrorHandler`` on the handler's thread (without one, debug builds print
    /// the first error of each subscription).
    ///
    /// ```swift
    /// struct InvalidUser: Error {}
    /// let token = bus.on(LoginEvent.self).next { event throws in
    ///     guard !event.userID.isEmpty else { throw InvalidUser() }
    ///     print("welcome", event.userID)
    /// }
    /// ```
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (E) throws -> Void
    ) -> EventToken {
        register(
            body(
                .general { _, event in
                    try handler(event)
                    return .continue
                }), at: CallSite(fileID: file, line: line))
    }

    /// Registers `handler`, which decides for each event whether the dispatch goes on to the next
    /// subscribers (``EventPropagation/continue``) or stops here (``EventPropagation/stop``), and
    /// returns the subscription's token: keep it, or the subscription lasts as long as the bus.
    ///
    /// `.stop` ends the current dispatch for every subscriber not yet called, of every key and
    /// supertype, except ``monitor()`` subscribers. Runs on the dispatching thread, before
    /// `dispatch` returns; once `dispose()` has returned it is not called again. Offered where the
    /// style's handlers run within the dispatch (``StoppingDelivery``): after ``atQueue(_:)``,
    /// ``onMainActor()``, ``isolated(to:)`` or ``monitor()`` it is a compile error that says why.
    /// Combine it with ``priority(_:)`` to decide before the others. An error it throws never
    /// reaches the dispatcher: it counts as `.continue` and goes to the bus's
    /// ``EventConfigurable/handlerErrorHandler``, on the dispatching thread. (A ``MainActorEventNode``'s
    /// makers offer a `@MainActor` `handle`: its posts run on the main queue.)
    ///
    /// ```swift
    /// let drawerIsOpen = false
    /// let token = bus.on(BackTapped.self).priority(.high).handle { _ in
    ///     drawerIsOpen ? .stop : .continue
    /// }
    /// ```
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (E) throws -> EventPropagation
    ) -> EventToken where Delivery: StoppingDelivery {
        register(.immediate(.general { _, event in try handler(event) }), at: CallSite(fileID: file, line: line))
    }
}

extension SubscriberMaker where Delivery: NonisolatedDelivery, Owner: AnyObject & Sendable {
    /// Registers `handler`, which receives the owner (retained for the call) with each event, and
    /// returns the subscription's token (which you may drop: the owner ends the subscription).
    ///
    /// The handler never runs once the owner is gone or the token is disposed, so it needs no
    /// `[weak self]`: capture nothing and use `owner`. Runs on the dispatching thread, or on the
    /// ``atQueue(_:)`` queue; for an owner isolated to the main actor, use ``onMainActor()``. If the
    /// owner is already gone, nothing is registered and the returned token is already disposed. An
    /// error it throws goes to ``EventConfigurable/handlerErrorHandler``, on the handler's thread.
    ///
    /// ```swift
    /// final class Greeter: EventSubscribing, Sendable {
    ///     init(bus: EventBus) {
    ///         bus.on(LoginEvent.self).freeWith(self).next { owner, event in owner.greet(event.userID) }
    ///     }
    ///     func greet(_ userID: String) { print("Hello \(userID)") }
    /// }
    /// ```
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (Owner, E) throws -> Void
    ) -> EventToken {
        register(
            body(
                .general { owner, event in
                    try handler(passedOwner(owner), event)
                    return .continue
                }), at: CallSite(fileID: file, line: line))
    }

    /// Registers `handler`, which receives the owner (retained for the call) with each event and
    /// decides whether the dispatch goes on, as the `handle` without an owner does, and returns the
    /// subscription's token (which you may drop: the owner ends the subscription).
    ///
    /// Runs on the dispatching thread, before `dispatch` returns; never once the owner is gone or
    /// the token is disposed. An error it throws counts as ``EventPropagation/continue`` and goes to
    /// the bus's ``EventConfigurable/handlerErrorHandler``, on the dispatching thread.
    ///
    /// ```swift
    /// final class Drawer: EventSubscribing, @unchecked Sendable {
    ///     var isOpen = false   // (a real drawer would be @MainActor; see onMainActor())
    ///     init(bus: EventBus) {
    ///         bus.on(BackTapped.self).priority(.high).freeWith(self).handle { drawer, _ in
    ///             drawer.isOpen ? .stop : .continue
    ///         }
    ///     }
    /// }
    /// ```
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (Owner, E) throws -> EventPropagation
    ) -> EventToken where Delivery: StoppingDelivery {
        register(
            .immediate(.general { owner, event in try handler(passedOwner(owner), event) }),
            at: CallSite(fileID: file, line: line))
    }
}
