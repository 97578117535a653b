/// A node's place in the tree, and what a post's route holds of it: its name, its bus (the
/// subscriptions), its mounted parent and its children.
///
/// Links refer to each other strongly and nothing refers to them weakly, so a route retains them on
/// the runtime's fast path (a weakly referenced object's retains take its side table). A link
/// outlives its node while a child's link or a post in progress holds it: when the node is
/// deallocated, `bus` becomes `nil` (the link is *gone*: children treat it as no parent), the link
/// leaves its parent, and its children are let go. So links form no cycle once their nodes are gone.
final class ChainLink: @unchecked Sendable {
    // @unchecked Sendable: `bus`, `providedParent`, `parent` and `children` are read and written
    // only under `ChainTree.lock`; `name` is immutable.

    /// The node's name.
    let name: String
    /// The node's subscriptions; `nil` once the node is gone. A post retains it for its duration,
    /// so the node's subscriptions end (the bus's deinit) only after the posts using them.
    var bus: EventBus?
    /// The parent asked at post time when none is mounted (user code: never called under the lock);
    /// `nil` once the node is gone, so that what it captured (nodes mounted below, perhaps, whose
    /// links hold this one) is let go with the node.
    var providedParent: (@Sendable () -> EventNode?)?
    /// The mounted parent, which may be gone (its `bus` is `nil`: then the node is a root).
    var parent: ChainLink?
    /// The mounted children, for ``EventNode/treeDescription``, with the tree change that mounted
    /// each (their order).
    var children: [ObjectIdentifier: (order: UInt64, link: ChainLink)] = [:]

    init(name: String, bus: EventBus, providedParent: (@Sendable () -> EventNode?)?) {
        self.name = name
        self.bus = bus
        self.providedParent = providedParent
    }
}
