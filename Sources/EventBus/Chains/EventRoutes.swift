/// The subscriptions a ``EventNode/routes(owner:_:)`` table made, as one token.
///
/// They are bound to the table's owner, so dropping this value does not end them: the owner's
/// deallocation does. Dispose it to end them all at once.
///
/// ```swift
/// let screen = ContentScreen()
/// let routes = screen.eventNode.routes(owner: screen) { table in
///     table.on(Liked.self) { owner, event in owner.open(event.id) }
/// }
/// routes.dispose()
/// ```
public struct EventRoutes: Hashable, Sendable {
    /// One token per route, in the order the table made them.
    public let tokens: [EventToken]

    /// Ends every route. Thread-safe and idempotent, as ``EventToken/dispose()``.
    ///
    /// ```swift
    /// let routes = EventRoutes(tokens: [])
    /// routes.dispose()
    /// ```
    public func dispose() {
        for token in tokens { token.dispose() }
    }

    /// Whether every route has ended.
    ///
    /// ```swift
    /// assert(EventRoutes(tokens: []).isDisposed)
    /// ```
    public var isDisposed: Bool { tokens.allSatisfy(\.isDisposed) }

    /// Puts every route's token in `bag`.
    ///
    /// ```swift
    /// let bag = DisposeBag()
    /// EventRoutes(tokens: []).disposed(by: bag)
    /// ```
    public func disposed(by bag: DisposeBag) {
        for token in tokens { bag.insert(token) }
    }

    /// Wraps `tokens` (for tests and for tables of your own).
    ///
    /// ```swift
    /// let routes = EventRoutes(tokens: [])
    /// ```
    public init(tokens: [EventToken]) {
        self.tokens = tokens
    }
}

extension EventNode {
    /// Fills `owner`'s strategy table on this node: each `table.on(E.self) { owner, event in … }`
    /// (or `table.handle`) routes the `E`s reaching this node to the owner, and the whole table is
    /// returned as one value.
    ///
    /// Every route is bound to `owner` (held weakly; the handlers receive it, so they capture
    /// nothing): the table ends with the owner, or when the result is disposed. `build` runs at
    /// once, on the calling thread.
    ///
    /// ```swift
    /// final class ContentScreen: EventNodeOwner, Sendable {
    ///     let eventNode = EventNode(name: "ContentScreen")
    ///     init() {
    ///         eventNode.routes(owner: self) { table in
    ///             table.on(SubViewButtonClicked.self) { owner, _ in owner.presentAlert() }
    ///             table.on(CellTapped.self) { owner, event in owner.open(event.id) }
    ///         }
    ///     }
    ///     func presentAlert() {}
    ///     func open(_ id: Int) {}
    /// }
    /// ```
    @discardableResult
    public func routes<Owner: AnyObject & Sendable>(
        owner: Owner, _ build: (EventRouteTable<Owner>) -> Void
    ) -> EventRoutes {
        let table = EventRouteTable(node: self, owner: owner)
        build(table)
        return EventRoutes(tokens: table.tokens)
    }
}
