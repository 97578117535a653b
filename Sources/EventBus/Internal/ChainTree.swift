/// The lock behind every node's mounted parent, and the walk that fixes a post's route.
///
/// One process-wide lock, so that `mount` can refuse a cycle against a consistent tree: mounts are
/// serialized, so the mounted-parent graph is acyclic at every instant. A walk holds it while it
/// follows mounted parents (O(depth), no user code: loading a weak reference never deallocates);
/// the strong references it takes are kept by the caller's route and released after unlocking.
/// A provided parent (a closure, user code) is asked with the lock released.
enum ChainTree {
    /// The lock; its state counts the tree's changes (mounts and unmounts). Not `Locked<Void>`: a
    /// zero-sized state shares its address with the lock's header, which TSan then reports as an
    /// access race between the exclusivity check of one critical section and another's lock call.
    static let lock = Locked<UInt64>(0)

    /// Calls `visit` with each node of `start`'s route, bottom-up, `start` first. `visit` runs no user
    /// code (it may be called under the lock) and keeps the node alive past the lock; it returns
    /// `false` to end the route. `repeats`: whether the node may already be in the route (it was
    /// reached through a provided parent, which `mount`'s cycle check cannot see).
    static func walk(from start: EventNode, _ visit: (_ node: EventNode, _ repeats: Bool) -> Bool) {
        guard visit(start, false) else { return }
        var last = start
        var afterProvided = false
        while true {
            var ended = false
            lock.withLock { _ in
                while let parent = last.mountedParent {
                    guard visit(parent, afterProvided) else {
                        ended = true
                        return
                    }
                    last = parent
                }
            }
            guard !ended, let provide = last.providedParent, let parent = provide() else { return }
            afterProvided = true
            guard visit(parent, true) else { return }
            last = parent
        }
    }
}
