/// Holds tokens and disposes them all when it is deallocated or emptied.
///
/// Give an object a bag and put its tokens in it: its subscriptions end with it, whatever bus they
/// are on. A bag forgets a token as soon as its subscription ends some other way (disposed directly,
/// owner gone, bus gone), so a long-lived bag holds only live subscriptions.
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
    private let tokens = BagTokens()

    /// Creates an empty bag.
    ///
    /// ```swift
    /// let bag = DisposeBag()
    /// ```
    public init() {}

    deinit { dispose() }

    /// The number of live subscriptions held. O(1).
    ///
    /// ```swift
    /// print(DisposeBag().count)   // 0
    /// ```
    public var count: Int { tokens.count }

    /// The tokens the bag's storage has room for (tests of its shrinking).
    var capacity: Int { tokens.capacity }

    /// Adds `token`; the bag will dispose it. A token inserted twice is held once. O(1).
    ///
    /// Usually spelled `token.disposed(by: bag)`. A token that is already disposed is not kept.
    /// A token is remembered by the last bag it was put in: put it in one bag.
    ///
    /// ```swift
    /// let bag = DisposeBag()
    /// bag.insert(bus.on(LoginEvent.self).next { print($0.userID) })
    /// ```
    public func insert(_ token: EventToken) {
        guard !token.isDisposed else { return }
        tokens.insert(token)
        token.attach(to: tokens)
    }

    /// Disposes every token in the bag and empties it; the bag can be reused afterwards.
    ///
    /// Tokens are disposed on the calling thread, after the bag's lock is released.
    ///
    /// ```swift
    /// let bag = DisposeBag()
    /// bag.dispose()   // e.g. when a screen disappears
    /// ```
    public func dispose() {
        tokens.removeAll().visitValues { token in token.dispose(reason: .bagDisposed) }
    }
}
