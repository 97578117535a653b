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

    /// Calls `body` with `start`'s route (see ``ChainTree/walk(from:_:)``), then releases it.
    static func with<R>(
        from start: EventNode, _ body: (UnsafeBufferPointer<Stop>) throws -> R
    ) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: Stop.self, capacity: inlineCapacity) { buffer in
            var count = 0
            var overflow: ContiguousArray<Stop>?
            ChainTree.walk(from: start.link) { link, bus, repeats in
                if repeats {
                    if overflow?.contains(where: { $0.link === link }) ?? false { return false }
                    if buffer[..<count].contains(where: { $0.link === link }) { return false }
                }
                let stop = Stop(link: link, bus: bus.takeUnretainedValue())
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
            defer { buffer.baseAddress!.deinitialize(count: count) }
            if let overflow { return try overflow.withUnsafeBufferPointer(body) }
            return try body(UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
    }

    /// The names of `start`'s route.
    static func names(from start: EventNode) -> [String] {
        with(from: start) { route in route.map(\.name) }
    }
}
