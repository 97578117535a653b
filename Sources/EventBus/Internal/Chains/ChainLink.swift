/// A node's place in the tree, and what a post's route holds of it: its name, its bus (the
/// subscriptions), its mounted parent and its children.
///
/// A link refers to its parent strongly and nothing refers to it weakly, so a route retains links on
/// the runtime's fast path (a weakly referenced object's retains take its side table). A link
/// outlives its node while a child's link or a post in progress holds it: when the node is
/// deallocated, `bus` becomes `nil` (the link is *gone*: children treat it as no parent), and the
/// link leaves its parent. Children are listed unretained (their nodes keep them), so links form no
/// cycle and a long list of siblings is never released recursively.
///
/// Two locks guard a link. What a post reads (``State``) is behind the link's own lock, so a post
/// takes no lock that another chain's posts take; every change of the tree's shape (mount, unmount,
/// a node's deinit) also holds ``ChainTree/lock``, which alone guards the children lists, so a
/// mount's cycle check sees a tree that nobody changes.
final class ChainLink: @unchecked Sendable {
    // @unchecked Sendable: `state` is behind its own lock; `gone`, `firstChild`, `lastChild`,
    // `previousSibling` and `nextSibling` are read and written only under `ChainTree.lock`; `name` is
    // immutable.

    /// What a post reads of a link, behind the link's own lock (written with `ChainTree.lock` held too).
    struct State {
        /// The node's subscriptions; `nil` once the node is gone. A post retains it for its
        /// duration, so the node's subscriptions end (the bus's deinit) only after the posts using them.
        var bus: EventBus?
        /// The mounted parent, which may be gone (its `bus` is `nil`: then the node is a root).
        var parent: ChainLink?
        /// The parent asked at post time when none is mounted (user code: never called under a
        /// lock); `nil` once the node is gone, so that what it captured (nodes mounted below,
        /// perhaps, whose links hold this one) is let go with the node.
        var providedParent: (@Sendable () -> EventNode?)?
        /// The tree change (``ChainTree/lock``'s count) that last set `parent`. A post that started
        /// before it may meet this link's old and new ancestors both: it checks the rest of its
        /// route for repeats.
        var changed = 0
    }

    /// The node's name.
    let name: String
    /// See ``State``.
    let state: Locked<State>

    /// Whether the node is deallocated; its children list is then empty and never read again (its
    /// former children's sibling pointers are stale: nobody follows them, see `removeChild`).
    var gone = false
    // unowned: a link is listed only while its node is alive (the node's deinit unlists it, under
    // `ChainTree.lock`, before the node lets the link go), and these are only read under it.
    // Checked references: a stale one (a gone link's former children's siblings, never followed)
    // keeps only the dead link's memory until it is overwritten, and following one would trap.
    /// The first and last of the mounted children, in the order they were mounted.
    unowned var firstChild: ChainLink?
    unowned var lastChild: ChainLink?
    /// The neighbours in the parent's children list.
    unowned var previousSibling: ChainLink?
    unowned var nextSibling: ChainLink?

    init(name: String, bus: EventBus, providedParent: (@Sendable () -> EventNode?)?) {
        self.name = name
        state = Locked(State(bus: bus, providedParent: providedParent))
    }

    /// Lists `child` last among the children. Under ``ChainTree/lock``; O(1).
    func appendChild(_ child: ChainLink) {
        child.previousSibling = lastChild
        child.nextSibling = nil
        if let lastChild { lastChild.nextSibling = child } else { firstChild = child }
        lastChild = child
    }

    /// Takes `child` out of the children list, if this link is not gone (a gone link's list was
    /// dropped whole). Under ``ChainTree/lock``; O(1).
    func removeChild(_ child: ChainLink) {
        defer {
            child.previousSibling = nil
            child.nextSibling = nil
        }
        guard !gone else { return }
        if let previous = child.previousSibling {
            previous.nextSibling = child.nextSibling
        } else {
            firstChild = child.nextSibling
        }
        if let next = child.nextSibling {
            next.previousSibling = child.previousSibling
        } else {
            lastChild = child.previousSibling
        }
    }
}
