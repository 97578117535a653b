/// The tokens a ``DisposeBag`` holds, by subscription id, behind a lock: what a bagged
/// subscription tells when it ends some other way (disposed directly, owner gone, bus gone).
///
/// Held strongly by its bag and by the nodes of the subscriptions in it, never weakly (a weak field
/// would cost every node two runtime calls, bagged or not). That makes no lasting cycle: a node lets
/// go of it when its subscription ends, and the bag ends all of its subscriptions when it is
/// deallocated.
final class BagTokens: Sendable {
    /// By id: a map that shrinks as tokens go (see `IncrementalMap`).
    private let tokens = Locked(IncrementalMap<UInt64, EventToken>())

    /// The number of tokens held. O(1).
    var count: Int { tokens.withLock { $0.count } }

    /// The entries the set has room for (tests of its shrinking).
    var capacity: Int { tokens.withLock { $0.capacity } }

    /// Holds `token` (once, however often it is inserted). O(1).
    func insert(_ token: EventToken) {
        // An emptied table is released after unlocking.
        _ = tokens.withLock { tokens in
            tokens.updateValue(token, forKey: token.id)
            return tokens.takeSpentTable()
        }
    }

    /// Empties the set and returns what it held.
    func removeAll() -> IncrementalMap<UInt64, EventToken> {
        tokens.withLock { tokens in
            defer { tokens = IncrementalMap() }
            return tokens
        }
    }

    /// Forgets the token of subscription `id`, which has ended. O(1).
    func forget(_ id: UInt64) {
        // The token, and an emptied table, are released after unlocking.
        _ = tokens.withLock { tokens -> (EventToken, AnyObject?)? in
            guard let index = tokens.index(forKey: id) else { return nil }
            return (tokens.remove(at: index), tokens.takeSpentTable())
        }
    }
}
