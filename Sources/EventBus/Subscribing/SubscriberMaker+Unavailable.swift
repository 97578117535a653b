// Every finisher a maker refuses, with the message that says why, in one place. Without these the
// compiler's error would name the maker's internal types; with them, it names the fix.
//
// Two rules, read from what each delivery style declares (``EventDelivery``):
// - `handle` decides, within the dispatch, whether the handlers after it run: only a style whose
//   handlers run within it (``StoppingDelivery``) offers it. The others say why they cannot: one
//   extension per style, with the style's handler isolation.
// - An owned maker's handler receives its owner: the one-argument form, which would capture `self`
//   and keep the owner alive forever, is refused for each handler isolation.
//
// Every stub takes a throwing handler, so that a throwing and a non-throwing closure get the same
// message.

extension SubscriberMaker where Delivery == EventDelivery.Queued {
    /// Unavailable: a queued handler runs after the dispatch, so it cannot stop it. Use `next`.
    ///
    /// ```swift
    /// let token = bus.on(BackTapped.self).atQueue(.main).next { _ in print("back") }
    /// ```
    @available(
        *, unavailable,
        message:
            "'handle' needs a synchronous subscriber: after 'atQueue(_:)' the handler runs after the dispatch, so it cannot stop it; use 'next'"
    )
    public func handle(_ handler: @escaping @Sendable (E) throws -> EventPropagation) -> EventToken {
        fatalError("unavailable")
    }

    /// Unavailable, as the one without an owner: a queued handler cannot stop the dispatch.
    ///
    /// ```swift
    /// subscribe(BackTapped.self).atQueue(.main).next { _, _ in print("back") }
    /// ```
    @available(
        *, unavailable,
        message:
            "'handle' needs a synchronous subscriber: after 'atQueue(_:)' the handler runs after the dispatch, so it cannot stop it; use 'next'"
    )
    public func handle(_ handler: @escaping @Sendable (Owner, E) throws -> EventPropagation) -> EventToken {
        fatalError("unavailable")
    }
}

extension SubscriberMaker where Delivery == EventDelivery.Monitor {
    /// Unavailable: a monitor runs after every handler and never stops the dispatch. Use `next`.
    ///
    /// ```swift
    /// let token = bus.on(BackTapped.self).monitor().next { _ in print("analytics: back") }
    /// ```
    @available(
        *, unavailable,
        message: "a 'monitor()' subscriber runs after every handler and cannot stop the dispatch: use 'next'"
    )
    public func handle(_ handler: @escaping @Sendable (E) throws -> EventPropagation) -> EventToken {
        fatalError("unavailable")
    }

    /// Unavailable, as the one without an owner: a monitor cannot stop the dispatch.
    ///
    /// ```swift
    /// subscribe(BackTapped.self).monitor().next { _, _ in print("analytics: back") }
    /// ```
    @available(
        *, unavailable,
        message: "a 'monitor()' subscriber runs after every handler and cannot stop the dispatch: use 'next'"
    )
    public func handle(_ handler: @escaping @Sendable (Owner, E) throws -> EventPropagation) -> EventToken {
        fatalError("unavailable")
    }
}

extension SubscriberMaker where Delivery == EventDelivery.MainActor {
    /// Unavailable: a main-actor handler may run after the dispatch (a dispatch from another
    /// thread enqueues it), so it cannot stop it. Use `next`, or a ``MainActorEventNode``, whose
    /// main-actor handlers run within the post and may `handle`.
    ///
    /// ```swift
    /// let token = bus.on(BackTapped.self).onMainActor().next { _ in print("back") }
    /// ```
    @available(
        *, unavailable,
        message:
            "'handle' needs a synchronous subscriber: after 'onMainActor()' the handler may run after the dispatch, and a monitor never stops it; use 'next' (a MainActorEventNode's own makers offer 'handle')"
    )
    public func handle(_ handler: @escaping @MainActor @Sendable (E) throws -> EventPropagation) -> EventToken {
        fatalError("unavailable")
    }

    /// Unavailable, as the one without an owner: a main-actor handler of the bus cannot stop the
    /// dispatch.
    ///
    /// ```swift
    /// subscribe(BackTapped.self).onMainActor().next { _, _ in print("back") }
    /// ```
    @available(
        *, unavailable,
        message:
            "'handle' needs a synchronous subscriber: after 'onMainActor()' the handler may run after the dispatch, and a monitor never stops it; use 'next' (a MainActorEventNode's own makers offer 'handle')"
    )
    public func handle(_ handler: @escaping @MainActor @Sendable (Owner, E) throws -> EventPropagation)
        -> EventToken
    {
        fatalError("unavailable")
    }
}

extension SubscriberMaker where Delivery == EventDelivery.Isolated, Owner: Actor {
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
        fatalError("unavailable")
    }
}

extension SubscriberMaker where Delivery: NonisolatedDelivery, Owner: AnyObject {
    /// Unavailable: an owner-bound handler receives its owner. Use `next { owner, event in … }`.
    ///
    /// A handler that captures `self` strongly keeps its owner alive, and the subscription with it,
    /// forever. The owner-passing form needs no capture: use the `owner` it receives, not `self`
    /// (the compiler cannot see a capture of `self` in it, which leaks the same way). To ignore the
    /// owner, write `next { _, event in … }`. The owner-passing form needs a `Sendable` owner (the
    /// handler may run on another thread); an owner that is not `Sendable` keeps unowned
    /// subscriptions' tokens in a ``DisposeBag`` property instead, which ends them with it.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).next { owner, event in owner.render(event) }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner: write 'next { owner, event in owner.… }' and use 'owner', not 'self' (a handler that captures 'self' keeps it alive, and its subscription with it)"
    )
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line, _ handler: @escaping @Sendable (E) throws -> Void
    ) -> EventToken {
        fatalError("unavailable")
    }

    /// Unavailable: an owner-bound handler receives its owner. Use `handle { owner, event in … }`.
    ///
    /// ```swift
    /// subscribe(BackTapped.self).handle { owner, _ in .continue }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner: write 'handle { owner, event in owner.… }' and use 'owner', not 'self' (a handler that captures 'self' keeps it alive, and its subscription with it)"
    )
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (E) throws -> EventPropagation
    ) -> EventToken where Delivery: StoppingDelivery {
        fatalError("unavailable")
    }
}

extension SubscriberMaker where Delivery: MainActorDelivery, Owner: AnyObject {
    /// Unavailable: an owner-bound handler receives its owner. Use `next { owner, event in … }`.
    ///
    /// A handler that captures `self` strongly keeps its owner alive, and the subscription with it,
    /// forever. The owner-passing form needs no capture: use the `owner` it receives, not `self`.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).onMainActor().next { owner, event in owner.render(event) }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner: write 'next { owner, event in owner.… }' and use 'owner', not 'self' (a handler that captures 'self' keeps it alive, and its subscription with it)"
    )
    @discardableResult
    public func next(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (E) throws -> Void
    ) -> EventToken {
        fatalError("unavailable")
    }

    /// Unavailable: an owner-bound handler receives its owner. Use `handle { owner, event in … }`.
    ///
    /// ```swift
    /// node.on(BackTapped.self).freeWith(drawer).handle { drawer, _ in drawer.isOpen ? .stop : .continue }
    /// ```
    @available(
        *, unavailable,
        message:
            "an owner-bound handler receives its owner: write 'handle { owner, event in owner.… }' and use 'owner', not 'self' (a handler that captures 'self' keeps it alive, and its subscription with it)"
    )
    @discardableResult
    public func handle(
        file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @MainActor @Sendable (E) throws -> EventPropagation
    ) -> EventToken where Delivery: StoppingDelivery {
        fatalError("unavailable")
    }
}
