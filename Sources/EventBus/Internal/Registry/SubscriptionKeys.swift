/// The `ofType` keys a maker chain gathered, in the order given: the first inline, the others in an
/// array. A subscription with one key, the commonest keyed shape, then allocates nothing for it (an
/// array of one would be an allocation per keyed subscribe).
@usableFromInline
struct SubscriptionKeys {
    /// The first key given, `nil` if none was.
    @usableFromInline var first: String?
    /// The keys given after the first, duplicates included (removed at registration); empty while
    /// `first` is `nil` (`append` and `init(_:)` keep it so).
    @usableFromInline var others: [String] = []

    @inlinable init() {}

    /// The keys of `keys`, in order.
    init(_ keys: [String]) {
        first = keys.first
        others = Array(keys.dropFirst())
    }

    /// Adds `key` after the others. O(1) amortised.
    @inlinable
    mutating func append(_ key: String) {
        if first == nil { first = key } else { others.append(key) }
    }

    /// The keys in order, each once.
    var unique: [String] {
        guard let first else { return [] }
        var seen: Set<String> = [first]
        return [first] + others.filter { seen.insert($0).inserted }
    }
}
