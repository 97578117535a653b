/// A post's route, fixed when it starts: the stops from the posting node up, retained for the post.
///
/// Kept in a buffer on the posting thread's stack for routes of up to `inlineCapacity` nodes (no
/// allocation), in an array beyond.
enum ChainRoute {
    static var inlineCapacity: Int { 24 }

    /// One node of a route: its link (name) and its bus (subscriptions), retained for the post.
    struct Stop {
        let link: ChainLink
        let bus: EventBus

        var name: String { link.name }
    }

    /// Calls `body` with `start`'s route (see ``walk(from:_:)``), then releases it.
    static func with<R>(
        from start: EventNode, _ body: (UnsafeBufferPointer<Stop>) throws -> R
    ) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: Stop.self, capacity: inlineCapacity) { buffer in
            var count = 0
            var overflow: ContiguousArray<Stop>?
            walk(from: start.link) { link, bus, repeats in
                if repeats {
                    let known =
                        overflow?.contains { $0.link === link } ?? buffer[..<count].contains { $0.link === link }
                    if known { return false }
                }
                let stop = Stop(link: link, bus: bus)
                if count < buffer.count {
                    (buffer.baseAddress! + count).initialize(to: stop)
                    count += 1
                } else {
                    if overflow == nil { overflow = ContiguousArray(buffer[..<count]) }
                    overflow!.append(stop)
                }
                return true
            }
            // Released here, with no lock held (a bus's last release ends its subscriptions).
            // One stop at a time: the stops' type is known here, so each release is a direct call
            // (`deinitialize(count:)` goes through the runtime's generic array destroy).
            defer { for index in 0..<count { _ = (buffer.baseAddress! + index).move() } }
            if let overflow { return try overflow.withUnsafeBufferPointer(body) }
            return try body(UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// The names of `start`'s route.
    static func names(from start: EventNode) -> [String] {
        with(from: start) { route in route.map(\.name) }
    }

    /// Calls `visit` with each stop of `start`'s route, bottom-up, `start` first: the link and its
    /// bus, retained. `visit` returns `false` to end the route. `repeats`: whether the link may
    /// already be in the route. A gone parent counts as none; a provided parent is asked with no
    /// lock held, and a link it leads back to ends the route (`mount`'s cycle check cannot see
    /// provided parents).
    ///
    /// Takes each link's own lock once (once more to ask a node for its provided parent), never
    /// ``ChainTree/lock``. The links read before any whose parent changed since the walk started
    /// (``ChainLink/State/changed`` above the completed changes) follow one state of the tree, which
    /// is acyclic: past such a link, or a provided parent, `repeats` is set.
    @inline(__always)
    private static func walk(
        from start: ChainLink, _ visit: (_ link: ChainLink, _ bus: EventBus, _ repeats: Bool) -> Bool
    ) {
        let since = ChainTree.completed.current
        // Unmanaged: the link to visit, retained (`start` here, then each parent under its child's
        // lock) until its stop holds it; and the stop whose mounted parent it is, kept by its stop.
        var next: Unmanaged<ChainLink>? = .passRetained(start)
        var child: Unmanaged<ChainLink>?
        var repeats = false
        while let link = next {
            let hop = link._withUnsafeGuaranteedRef { $0.hop() }
            guard let bus = hop.bus else {
                link.release()
                // Gone: as if `child` had no mounted parent; reached through a provided one: the end.
                guard let asker = child else { return }
                next = asker._withUnsafeGuaranteedRef(\.providedParentLink)
                (repeats, child) = (true, nil)
                continue
            }
            guard visit(link.takeRetainedValue(), bus.takeRetainedValue(), repeats) else {
                hop.parent?.release()
                return
            }
            if hop.changed > since { repeats = true }
            if let parent = hop.parent {
                (next, child) = (parent, link)
            } else {
                next = hop.providesParent ? link._withUnsafeGuaranteedRef(\.providedParentLink) : nil
                (repeats, child) = (true, nil)
            }
        }
    }
}
