/// A post's route, fixed when it starts: the nodes from the posting one up, retained for the post.
///
/// Kept in a buffer on the posting thread's stack for routes of up to `inlineCapacity` nodes (no
/// allocation), in an array beyond.
enum ChainRoute {
    static var inlineCapacity: Int { 24 }

    /// Calls `body` with `start`'s route (see ``ChainTree/walk(from:_:)``), then releases it.
    static func with<R>(
        from start: EventNode, _ body: (UnsafeBufferPointer<EventNode>) throws -> R
    ) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: EventNode.self, capacity: inlineCapacity) { buffer in
            var count = 0
            var overflow: ContiguousArray<EventNode>?
            ChainTree.walk(from: start) { node, repeats in
                if repeats {
                    if overflow?.contains(where: { $0 === node }) ?? false { return false }
                    if buffer[..<count].contains(where: { $0 === node }) { return false }
                }
                if count < buffer.count {
                    (buffer.baseAddress! + count).initialize(to: node)
                    count += 1
                } else {
                    if overflow == nil { overflow = ContiguousArray(buffer[..<count]) }
                    overflow!.append(node)
                }
                return true
            }
            // Released here, with no lock held (a node's last release runs its subscriptions' deinits).
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
