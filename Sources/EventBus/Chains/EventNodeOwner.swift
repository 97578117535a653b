/// An object that has a place in an event chain: a screen, a view model, a cell.
///
/// Conform by storing a node; the extension then mounts owners on owners and starts owner-bound
/// subscriptions, as ``EventSubscribing`` does for the bus. An owner whose node is a
/// ``MainActorEventNode`` conforms to ``MainActorEventNodeOwner`` instead.
///
/// ```swift
/// final class ContentScreen: EventNodeOwner, Sendable {
///     let eventNode = EventNode(name: "ContentScreen")
/// }
/// final class CellView: EventNodeOwner, Sendable {
///     let eventNode = EventNode(name: "CellView")
/// }
/// let content = ContentScreen()
/// let cell = CellView()
/// _ = cell.mount(on: content)
/// ```
public protocol EventNodeOwner: AnyObject {
    /// The owner's node. Keep it in a `let`: the node is the owner's identity in the chain.
    var eventNode: EventNode { get }
}

extension EventNodeOwner {
    /// Mounts this owner's node on `parent`'s (see ``EventNode/mount(on:)``); `false` on a cycle.
    ///
    /// ```swift
    /// _ = cell.mount(on: content)
    /// ```
    @discardableResult
    public func mount(on parent: some EventNodeOwner) -> Bool {
        eventNode.mount(on: parent.eventNode)
    }

    /// Starts a subscription on this owner's node bound to the owner: `eventNode.on(type).freeWith(self)`.
    ///
    /// ```swift
    /// final class Container: EventNodeOwner, Sendable {
    ///     let eventNode = EventNode(name: "Container")
    ///     func start() {
    ///         on(Liked.self).next { owner, event in print(owner, event.id) }
    ///     }
    /// }
    /// ```
    public func on<E: Event>(_ type: E.Type) -> SubscriberMaker<E, Self, EventDelivery.Synchronous> {
        eventNode.on(type).freeWith(self)
    }
}
