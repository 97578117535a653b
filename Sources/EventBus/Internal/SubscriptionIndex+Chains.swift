extension SubscriptionIndex {
    /// Which of the types `first` and `second` have a node (live or pinned) linked on this index,
    /// in one lock acquisition (none when neither may have a bucket, the commonest case on a chain):
    /// a post skips a chain node's dispatches that would find nobody. O(1), no user code.
    func hasNodes(_ first: ObjectIdentifier, _ second: ObjectIdentifier) -> (Bool, Bool) {
        guard mayHaveBucket(first) || mayHaveBucket(second) else { return (false, false) }
        return withIndex { index, _ in
            (
                index.bucket(for: first).map { !$0.isEmpty } ?? false,
                index.bucket(for: second).map { !$0.isEmpty } ?? false
            )
        }
    }
}
