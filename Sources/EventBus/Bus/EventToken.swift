/// A subscription's handle, returned by `next`: call ``dispose()`` to end the subscription.
///
/// Dropping a token does **not** end its subscription, as in QTEventBus: a subscription made with
/// `subscribe(E.self).next { }` or `freeWith(owner)` lives as long as its owner, and one made with
/// neither lives until ``dispose()``, a ``DisposeBag`` holding it is emptied or deallocated, or the
/// bus is deallocated. The token names the subscription by id: keeping a token keeps neither the
/// subscription's handler nor its owner nor the bus alive (only the bus's subscription registry,
/// emptied once the bus is gone).
///
/// ```swift
/// let token = bus.on(ChatMessage.self).ofType("room-7").next { message in
///     print(message.text)
/// }
/// // later
/// token.dispose()
/// ```
///
/// ## Dispose guarantee
///
/// Once ``dispose()`` has returned, no delivery to the subscription **starts**: not a synchronous one
/// from a dispatch in progress on another thread, and not one already enqueued on an `atQueue`
/// queue or the main queue. A delivery "starts" when the bus, immediately before calling the
/// handler, finds the subscription live (an atomic load); a handler that another thread entered
/// before `dispose()` marked the subscription ended may still be running, or just entering, when
/// `dispose()` returns. `dispose()` does not wait for it, so it is safe to call from inside any
/// handler, the subscription's own included.
///
/// `dispose()` releases the handler closure and everything it captured once nothing in progress
/// holds it: at once, unless a dispatch on another thread holds the subscription at that moment
/// (then when that dispatch moves on) or deliveries to it are still enqueued on its queue or the
/// main queue (then as each is skipped).
///
/// Tokens are values: `Hashable` by subscription, `Sendable`, and ``dispose()`` is idempotent and
/// thread-safe, before or after the bus itself is gone.
public struct EventToken: Hashable, Sendable {
    /// A number unique among the process's subscriptions, from a counter (never a timestamp).
    ///
    /// Useful in logs. An inert token (see ``isDisposed``) has `id` 0.
    public let id: UInt64

    /// The subscription's place in its container.
    private let slot: UInt32
    /// Where the subscription is registered; `nil` for an inert token. Held strongly, and not
    /// weakly, so that making and using a token takes none of the runtime's weak-reference paths:
    /// once the bus is gone, its registry is empty and every call finds the subscription ended.
    private let container: BusCore?

    init(_ subscription: SubscriptionHandle, in container: BusCore) {
        id = subscription.id
        slot = subscription.slot
        self.container = container
    }

    private init() {
        id = 0
        slot = 0
        container = nil
    }

    private var handle: SubscriptionHandle { SubscriptionHandle(id: id, slot: slot) }

    /// A token for a subscription that never started (for example `freeWith` an owner that is
    /// already gone). It is already disposed.
    package static let inert = EventToken()

    /// Whether the subscription has ended: by ``dispose()``, its bag, its owner's deallocation
    /// (once the bus noticed), or the bus's deallocation.
    ///
    /// ```swift
    /// let token = EventBus.shared.on(LoginEvent.self).next { _ in }
    /// token.dispose()
    /// assert(token.isDisposed)
    /// ```
    public var isDisposed: Bool { !(container?.isLive(handle) ?? false) }

    /// Ends the subscription.
    ///
    /// Thread-safe and idempotent: the first call ends it, later calls (on any thread) do nothing.
    /// After it returns no delivery starts (see "Dispose guarantee" above), and the bus forgets the
    /// subscription in O(1). Safe to call from inside a handler, the subscription's own included,
    /// and after the bus is deallocated.
    ///
    /// ```swift
    /// let token = bus.on(LoginEvent.self).next { print($0.userID) }
    /// token.dispose()
    /// bus.dispatch(LoginEvent(userID: "42"))   // prints nothing
    /// ```
    public func dispose() {
        dispose(reason: .disposed)
    }

    /// Ends the subscription, for `reason` (what the tracer is told).
    func dispose(reason: TraceRecord.Ended.Reason) {
        container?.remove(handle, reason: reason)
    }

    /// What the subscription is (type, keys, delivery, owner, call site), or `nil` once it has
    /// ended. Takes the bus lock briefly; loads the owner (see ``SubscriptionInfo/isOwnerAlive``).
    ///
    /// ```swift
    /// let token = bus.on(LoginEvent.self).next { _ in }
    /// print(token.info!)   // #1 LoginEvent synchronous, normal, made at MyApp/Session.swift:12
    /// token.dispose()
    /// assert(token.info == nil)
    /// ```
    public var info: SubscriptionInfo? { container?.info(handle) }

    /// Adds the token to `bag`, which disposes it when the bag is emptied or deallocated.
    ///
    /// ```swift
    /// let bag = DisposeBag()
    /// bus.on(LoginEvent.self).next { print($0.userID) }.disposed(by: bag)
    /// ```
    public func disposed(by bag: DisposeBag) {
        bag.insert(self)
    }

    /// Has the subscription's container tell `bag` when it ends (`DisposeBag.insert`).
    func attach(to bag: BagTokens) {
        guard let container else {
            bag.forget(id)
            return
        }
        container.attach(handle, to: bag)
    }

    /// Two tokens are equal when they name the same subscription (ids are unique in the process).
    ///
    /// ```swift
    /// var tokens: Set<EventToken> = []
    /// tokens.insert(EventBus.shared.on(LoginEvent.self).next { _ in })
    /// ```
    public static func == (lhs: EventToken, rhs: EventToken) -> Bool { lhs.id == rhs.id }

    /// Hashes the subscription's id.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}
