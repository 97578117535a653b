extension BusCore {
    /// What a chain node's registry has for a post or request: whether the types `first` and `second`
    /// have a node (live or pinned) linked, and whether a tracer is set. One lock acquisition, none when neither
    /// type may have a bucket and no tracer is set (the commonest case on a chain): a post skips a
    /// chain node's dispatches that would find nobody. O(1), no user code.
    func chainInterest(_ first: ObjectIdentifier, _ second: ObjectIdentifier) -> ChainInterest {
        guard snapshot.mayHaveBucket(first) || snapshot.mayHaveBucket(second) else { return ChainInterest() }
        return withRegistry { registry in
            ChainInterest(
                first: registry.bucket(for: first).map { !$0.isEmpty } ?? false,
                second: registry.bucket(for: second).map { !$0.isEmpty } ?? false,
                isTraced: registry.hasTracer)
        }
    }
}

/// See ``BusCore/chainInterest(_:_:)``.
struct ChainInterest {
    var first = false
    var second = false
    /// Whether the node's bus has a tracer (read again, ``BusCore/tracer``, to trace the hop: a
    /// closure here would be copied and destroyed at every hop of every post).
    var isTraced = false
}
