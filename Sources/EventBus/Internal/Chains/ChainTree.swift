/// The tree's shape: mounting (with its cycle check), unmounting, a node's deinit, and the tree's
/// description.
///
/// Changes of shape are serialized by one process-wide lock, so the mounted-parent graph is acyclic
/// at every instant; a post never takes that lock. It reads each link of its route under the link's
/// own lock (see ``ChainLink``), and the change count tells it whether its route may have met a link
/// that moved meanwhile (then it checks for repeats: ``ChainRoute``).
enum ChainTree {
    /// The lock of the tree's shape; its state counts the changes (mounts and unmounts). Not
    /// `Locked<Void>`: a zero-sized state shares its address with the lock's header, which TSan then
    /// reports as an access race between the exclusivity check of one critical section and another's
    /// lock call.
    static let lock = Locked<Int>(0)

    /// The count of the changes whose writes are done (stored after them): what a post compares
    /// links' ``ChainLink/State/changed`` with, read with no lock.
    static let completed = AtomicCounter()

    /// Makes `parent` the mounted parent of `link` unless `parent` is `link` or one of its mounted
    /// descendants; returns whether it did, and the steps its cycle check took.
    ///
    /// The check walks up from `parent` and down `link`'s subtree in turn, and stops when either
    /// walk ends: O(min(depth of `parent`, size of `link`'s subtree)) under the lock. So mounting a
    /// new leaf (building top-down) or onto a new root (building bottom-up) takes O(1), and building
    /// a tree by mounting roots in any order O(n log n) in all (each step is charged to the smaller
    /// of the two trees).
    static func mount(_ link: ChainLink, on parent: ChainLink) -> (mounted: Bool, steps: Int) {
        let (result, old) = lock.withLock { changes -> ((mounted: Bool, steps: Int), ChainLink?) in
            let (cycle, steps) = isCycle(mounting: link, on: parent)
            if cycle { return ((false, steps), nil) }
            changes &+= 1
            let old = link.state.withLock { [changes] state in
                defer {
                    state.parent = parent
                    state.changed = changes
                }
                return state.parent
            }
            old?.removeChild(link)
            parent.appendChild(link)
            completed.store(changes)
            return ((true, steps), old)
        }
        _ = consume old  // released with no lock held
        return result
    }

    /// Detaches `link` from its mounted parent, if any. O(1).
    static func unmount(_ link: ChainLink) {
        let old: ChainLink? = lock.withLock { changes in
            changes &+= 1
            let old = link.state.withLock { [changes] state in
                state.changed = changes
                return state.parent.take()
            }
            old?.removeChild(link)
            completed.store(changes)
            return old
        }
        _ = consume old  // released with no lock held
    }

    /// The node of `link` is deallocated: the link is gone (children become roots), leaves its
    /// parent, drops its children list, and lets go of its provided parent (which may capture nodes
    /// whose links hold this one) and of its bus (left to the posts in progress: the last of them
    /// ends the subscriptions). O(1); what it let go of is released after unlocking.
    static func remove(_ link: ChainLink) {
        let released = lock.withLock { _ in
            let released = link.state.withLock { state in
                (state.parent.take(), state.bus.take(), state.providedParent.take())
            }
            released.0?.removeChild(link)
            link.gone = true
            link.firstChild = nil
            link.lastChild = nil
            return released
        }
        _ = released  // released here, with no lock held
    }

    /// Whether `parent` is `link` or one of its mounted descendants (a gone link counts as no
    /// parent), and the steps taken: a step up from `parent` and one down `link`'s subtree in turn.
    private static func isCycle(mounting link: ChainLink, on parent: ChainLink) -> (Bool, steps: Int) {
        var up: ChainLink? = parent
        // The subtree's links still to visit (each one's next siblings and children come after it).
        var down: [ChainLink] = []
        if let first = link.firstChild { down.append(first) }
        var steps = 0
        while true {
            steps += 1
            guard let ancestor = up else { return (false, steps) }
            if ancestor === link { return (true, steps) }
            up = ancestor.state.withLock(\.parent).flatMap { $0.gone ? nil : $0 }
            guard let descendant = down.popLast() else { return (false, steps) }
            if descendant === parent { return (true, steps) }
            if let next = descendant.nextSibling { down.append(next) }
            if let child = descendant.firstChild { down.append(child) }
        }
    }

    /// ``EventNode/treeDescription`` of `top`: depth first with an explicit stack (no recursion),
    /// one line per node, its indentation capped at ``EventNode/treeIndentationLimit`` levels. Takes
    /// ``lock`` once per node, to copy its children's list: O(its children) under the lock (posts
    /// do not take it; mounts wait), O(subtree) in all.
    static func describe(from top: ChainLink) -> String {
        var text = ""
        // The nodes still to write, the next one last, with their depth below `top`.
        var pending: [(link: ChainLink, depth: Int)] = [(top, 0)]
        while let (link, depth) = pending.popLast() {
            // Copied whole in one hold: a child that moves while the rest is written cannot take
            // its siblings out of the description with it.
            let children: [ChainLink] = lock.withLock { _ in
                var children: [ChainLink] = []
                var child = link.firstChild
                while let current = child {
                    children.append(current)
                    child = current.nextSibling
                }
                return children
            }
            pending.append(contentsOf: children.reversed().lazy.map { ($0, depth + 1) })
            if depth > 0 { text += "\n" }
            let indentation = min(depth, EventNode.treeIndentationLimit)
            text += String(repeating: "  ", count: indentation)
            if depth > indentation { text += "[\(depth)] " }
            text += link.name
        }
        return text
    }
}
