/// The strategy table of one owner on one node, filled by ``EventNode/routes(owner:_:)``:
/// one owner-bound handler per event type, the typed heir of the responder-chain router's
/// `routerEventWithName:userInfo:` table.
///
/// Only usable inside the `routes` closure, on the calling thread.
///
/// ```swift
/// final class ContentScreen: EventNodeOwner, Sendable {
///     let eventNode = EventNode(name: "ContentScreen")
///     init() {
///         eventNode.routes(owner: self) { table in
///             table.on(Liked.self) { owner, event in owner.open(event.id) }
///             table.handle(BackTapped.self) { _, _ in .stop }
///         }
///     }
///     func open(_ id: Int) {}
/// }
/// ```
public final class EventRouteTable<Owner: AnyObject & Sendable> {
    private let node: EventNode
    private weak var owner: Owner?
    /// The tokens made so far.
    private(set) var tokens: [EventToken] = []

    init(node: EventNode, owner: Owner) {
        self.node = node
        self.owner = owner
    }

    /// Routes the `E`s reaching the node to `handler`, with the owner: `on(type).freeWith(owner).next`.
    ///
    /// ```swift
    /// let screen = ContentScreen()
    /// screen.eventNode.routes(owner: screen) { table in
    ///     table.on(Liked.self) { owner, event in owner.open(event.id) }
    /// }
    /// ```
    public func on<E: Event>(
        _ type: E.Type, file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (Owner, E) -> Void
    ) {
        tokens.append(node.on(type).freeWith(owner).next(file: file, line: line, handler))
    }

    /// Routes the `E`s reaching the node to `handler`, which decides whether they go on up:
    /// `on(type).freeWith(owner).handle`. The responder-chain router's "handled, do not call super".
    ///
    /// ```swift
    /// let screen = ContentScreen()
    /// screen.eventNode.routes(owner: screen) { table in
    ///     table.handle(BackTapped.self) { _, _ in .stop }
    /// }
    /// ```
    public func handle<E: Event>(
        _ type: E.Type, file: StaticString = #fileID, line: UInt = #line,
        _ handler: @escaping @Sendable (Owner, E) -> EventPropagation
    ) {
        tokens.append(node.on(type).freeWith(owner).handle(file: file, line: line, handler))
    }
}
