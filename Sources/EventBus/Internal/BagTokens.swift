/// The tokens a ``DisposeBag`` holds, by subscription id, behind a lock: what a bagged
/// subscription tells when it ends some other way (disposed directly, owner gone, bus gone).
///
/// Held strongly by its bag and by the nodes of the subscriptions in it, never weakly (a weak field
/// would cost every node two runtime calls, bagged or not). That makes no lasting cycle: a node lets
/// go of it when its subscription ends, and the bag ends all of its subscriptions when it is
/// deallocated.
final class BagTokens: Sendable {
    private let tokens = Locked([UInt64: EventToken]())

    /// The number of tokens held. O(1).
    var count: Int { tokens.withLock { $0.count } }

    /// Holds `token` (once, however often it is inserted). O(1).
    func insert(_ token: EventToken) {
        tokens.withLock { $0[token.id] = token }
    }

    /// Empties the set and returns what it held.
    func removeAll() -> [UInt64: EventToken] {
        tokens.withLock { tokens in
            defer { tokens = [:] }
            return tokens
        }
    }

    /// Forgets the token of subscription `id`, which has ended. O(1).
    func forget(_ id: UInt64) {
        _ = tokens.withLock { $0.removeValue(forKey: id) }
    }
}
