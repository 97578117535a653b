/// Holds tokens and disposes them all when it is deallocated or emptied.
///
/// Give an object a bag and put its tokens in it: its subscriptions end with it, whatever bus they
/// are on. A bag forgets tokens that were disposed some other way, so a long-lived bag whose owner
/// subscribes and disposes often stays small (bounded by about twice its live tokens).
///
/// ```swift
/// final class SessionController {
///     private let bag = DisposeBag()
///
///     init(bus: EventBus) {
///         bus.on(LoginEvent.self).next { print("login", $0.userID) }.disposed(by: bag)
///         bus.on(LogoutEvent.self).next { _ in print("logout") }.disposed(by: bag)
///     }
/// }   // deinit of the controller → deinit of the bag → both subscriptions end
/// ```
///
/// Thread-safe: insert, dispose and deallocate from any thread.
public final class DisposeBag: Sendable {
    private struct Contents {
        var tokens: [ObjectIdentifier: EventToken] = [:]
        /// When `tokens.count` reaches this, disposed tokens are pruned (amortised O(1) insert).
        var pruneThreshold = DisposeBag.minimumPruneThreshold
    }

    static let minimumPruneThreshold = 16

    private let contents = Locked(Contents())

    /// Creates an empty bag.
    ///
    /// ```swift
    /// let bag = DisposeBag()
    /// ```
    public init() {}

    deinit { dispose() }

    /// The number of tokens held; disposed tokens may be counted until the next prune.
    ///
    /// ```swift
    /// print(bag.count)
    /// ```
    public var count: Int { contents.withLock { $0.tokens.count } }

    /// Adds `token`; the bag will dispose it. A token inserted twice is held once.
    ///
    /// Usually spelled `token.disposed(by: bag)`. A token that is already disposed is not kept.
    ///
    /// ```swift
    /// bag.insert(bus.on(LoginEvent.self).next { print($0.userID) })
    /// ```
    public func insert(_ token: EventToken) {
        guard !token.isDisposed else { return }
        contents.withLock { contents in
            contents.tokens[ObjectIdentifier(token)] = token
            if contents.tokens.count >= contents.pruneThreshold {
                contents.tokens = contents.tokens.filter { !$0.value.isDisposed }
                contents.pruneThreshold = Swift.max(Self.minimumPruneThreshold, 2 * contents.tokens.count)
            }
        }
    }

    /// Disposes every token in the bag and empties it; the bag can be reused afterwards.
    ///
    /// Tokens are disposed on the calling thread, after the bag's lock is released.
    ///
    /// ```swift
    /// bag.dispose()   // e.g. when a screen disappears
    /// ```
    public func dispose() {
        let tokens = contents.withLock { contents in
            defer { contents = Contents() }
            return contents.tokens
        }
        for token in tokens.values { token.dispose() }
    }
}
