/// The lock behind every node's mounted parent, and the walk that fixes a post's route.
///
/// One process-wide lock, so that `mount` can refuse a cycle against a consistent tree: mounts are
/// serialized, so the mounted-parent graph is acyclic at every instant. A walk holds it while it
/// follows mounted parents (O(depth), no user code: it only retains links and buses, and a node's
/// deinit releases what it held after unlocking); the references it takes are kept by the caller's
/// route and released after unlocking. A provided parent (a closure, user code) is asked with the
/// lock released.
enum ChainTree {
    /// The lock; its state counts the tree's changes (mounts and unmounts), which also orders a
    /// node's children. Not `Locked<Void>`: a zero-sized state shares its address with the lock's
    /// header, which TSan then reports as an access race between the exclusivity check of one
    /// critical section and another's lock call.
    static let lock = Locked<UInt64>(0)

    /// Calls `visit` with each stop of `start`'s route, bottom-up, `start` first: the link and its
    /// bus, unretained (under the lock, the tree keeps them alive). `visit` runs no user code (it is
    /// called under the lock) and retains what it keeps; it returns `false` to end the route.
    /// `repeats`: whether the link may already be in the route (it was reached through a provided
    /// parent, which `mount`'s cycle check cannot see). A gone parent counts as none.
    static func walk(
        from start: ChainLink, _ visit: (_ link: ChainLink, _ bus: Unmanaged<EventBus>, _ repeats: Bool) -> Bool
    ) {
        var next: ChainLink? = start
        var repeats = false
        while let first = next {
            // Unmanaged: under the lock, each link is kept alive by its child (the first by `next`).
            var last = Unmanaged.passUnretained(first)
            var ended = false
            var provide: (@Sendable () -> EventNode?)?
            lock.withLock { _ in
                while true {
                    let (bus, parent) = last._withUnsafeGuaranteedRef { link in
                        (link.bus.map(Unmanaged.passUnretained), link.parent.map(Unmanaged.passUnretained))
                    }
                    guard let bus, last._withUnsafeGuaranteedRef({ visit($0, bus, repeats) }) else {
                        ended = true
                        return
                    }
                    guard let parent, parent._withUnsafeGuaranteedRef({ $0.bus != nil }) else {
                        provide = last._withUnsafeGuaranteedRef(\.providedParent)
                        return
                    }
                    last = parent
                }
            }
            // Asked with the lock released (user code).
            guard !ended, let provide, let node = provide() else { return }
            repeats = true
            next = node.link
        }
    }

    /// ``EventNode/treeDescription`` of `top`: depth first with an explicit stack (no recursion),
    /// one line per node, its indentation capped at ``EventNode/treeIndentationLimit`` levels.
    static func describe(from top: ChainLink) -> String {
        var text = ""
        // The nodes still to write, the next one last, with their depth below `top`.
        var pending: [(link: ChainLink, depth: Int)] = [(top, 0)]
        while let (link, depth) = pending.popLast() {
            if depth > 0 { text += "\n" }
            let indentation = min(depth, EventNode.treeIndentationLimit)
            text += String(repeating: "  ", count: indentation)
            if depth > indentation { text += "[\(depth)] " }
            text += link.name
            let children = lock.withLock { _ in link.children.values.sorted { $0.order < $1.order }.map(\.link) }
            pending.append(contentsOf: children.reversed().lazy.map { ($0, depth + 1) })
        }
        return text
    }
}
