/// A main-actor object that has a place in a main-actor event chain: a view model, a screen, a
/// view. The main-actor counterpart of ``EventNodeOwner``.
///
/// Conform by storing a ``MainActorEventNode``; the extension then mounts owners on owners and
/// starts owner-bound subscriptions, whose `@MainActor` handlers receive the owner (and may
/// `handle`: a main-actor chain's post runs on the main queue).
///
/// ```swift
/// @MainActor final class ListModel: MainActorEventNodeOwner {
///     let eventNode = MainActorEventNode(name: "List")
///     var likes = 0
///     func start() {
///         on(Liked.self).next { owner, _ in owner.likes += 1 }   // @MainActor, owner-bound
///     }
/// }
/// @MainActor final class CellModel: MainActorEventNodeOwner {
///     let eventNode = MainActorEventNode(name: "Cell")
/// }
/// @MainActor func build() {
///     let list = ListModel()
///     let cell = CellModel()
///     list.start()
///     cell.mount(on: list)
///     cell.eventNode.post(Liked(id: 7))   // list.likes == 1, once the main queue has run it
/// }
/// ```
@MainActor
public protocol MainActorEventNodeOwner: AnyObject {
    /// The owner's node. Keep it in a `let`: the node is the owner's identity in the chain.
    var eventNode: MainActorEventNode { get }
}

extension MainActorEventNodeOwner {
    /// Mounts this owner's node on `parent`'s (see ``MainActorEventNode/mount(on:)``); `false` on a
    /// cycle.
    ///
    /// ```swift
    /// @MainActor func attach(_ cell: CellModel, to list: ListModel) { cell.mount(on: list) }
    /// ```
    @discardableResult
    public func mount(on parent: some MainActorEventNodeOwner) -> Bool {
        eventNode.mount(on: parent.eventNode)
    }

    /// Starts a subscription on this owner's node bound to the owner:
    /// `eventNode.on(type).freeWith(self)`. Its handlers are `@MainActor` and receive the owner.
    ///
    /// ```swift
    /// @MainActor final class Editor: MainActorEventNodeOwner {
    ///     let eventNode = MainActorEventNode(name: "Editor")
    ///     var isEditing = true
    ///     func start() {
    ///         on(BackTapped.self).handle { owner, _ in owner.isEditing ? .stop : .continue }
    ///     }
    /// }
    /// ```
    public func on<E: Event>(_ type: E.Type) -> SubscriberMaker<E, Self, EventDelivery.MainActorChain> {
        eventNode.on(type).freeWith(self)
    }
}
