/// A live subscription, returned by `next`: call ``dispose()`` to end it.
///
/// Dropping a token does **not** end its subscription, as in QTEventBus: a subscription made with
/// `subscribe(E.self).next { }` or `freeWith(owner)` lives as long as its owner, and one made with
/// neither lives until ``dispose()``, a ``DisposeBag`` holding it is emptied or deallocated, or the
/// bus is deallocated.
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
/// queue. A delivery "starts" when the bus, immediately before calling the handler, finds the
/// subscription live; a handler that another thread had already entered when `dispose()` was called
/// may still be running when it returns. `dispose()` does not wait for it, so it is safe to call from
/// inside any handler, including the subscription's own.
///
/// `dispose()` also releases the handler closure and everything it captured, outside the bus's lock;
/// a delivery already in flight keeps its own reference until it finishes.
///
/// Tokens are thread-safe: ``dispose()`` is idempotent and may be called from any thread, any number
/// of times, before or after the bus itself is gone.
public final class EventToken: @unchecked Sendable {
    // @unchecked Sendable: `previous`, `next`, `primary`, `isLinked` and `handlerStorage` are read
    // and written only under the owning bus's lock; `liveness` is atomic; `owner` and `registry`
    // are weak references set in init and never written again; the rest is immutable.

    /// A number unique among this bus's subscriptions, from a counter (never a timestamp).
    ///
    /// Useful in logs and introspection. An inert token (see ``isDisposed``) has `id` 0.
    public let id: UInt64

    /// The type of event this subscription receives.
    let eventTypeID: ObjectIdentifier
    /// The `ofType` key of the list this node sits in, `nil` for the type's unkeyed list.
    let key: String?
    let mode: DeliveryMode
    /// Whether the subscription was bound to an owner with `freeWith`.
    let isOwned: Bool
    /// The `freeWith` owner. Set once at init and never written again, so unsynchronized reads are safe.
    weak var owner: AnyObject?
    /// The bus index this node is registered in; `nil` once the bus is gone.
    weak var registry: Registry?
    /// One node per extra `ofType` key of the same subscription; disposed with this one.
    let siblings: [EventToken]
    /// For a sibling, the node that was returned as the subscription's token; `nil` for that node.
    @exclusivity(unchecked) unowned(unsafe) var primary: EventToken?  // unowned(unsafe): read only under the lock while linked, and a primary is unlinked with its siblings

    /// The node that stands for the whole subscription.
    var subscription: EventToken { primary ?? self }

    // Index linkage and payload: guarded by the bus lock, which also makes the runtime's dynamic
    // exclusivity checks redundant (`@exclusivity(unchecked)`): they cost more than the linking.
    @exclusivity(unchecked) unowned(unsafe) var previous: EventToken?  // unowned(unsafe): the list owns every node through `next`
    @exclusivity(unchecked) var next: EventToken?
    /// Whether the node is in one of its bus's lists (cheaper to test than `handlerStorage`).
    @exclusivity(unchecked) var isLinked = false
    /// The `Handler<E>`, until the subscription ends.
    @exclusivity(unchecked) var handlerStorage: (any Sendable)?

    private let liveness = AtomicLiveness()

    init(
        id: UInt64,
        eventTypeID: ObjectIdentifier,
        key: String?,
        mode: DeliveryMode,
        owner: AnyObject?,
        isOwned: Bool,
        registry: Registry?,
        handler: (any Sendable)?,
        siblings: [EventToken] = []
    ) {
        self.id = id
        self.eventTypeID = eventTypeID
        self.key = key
        self.mode = mode
        self.owner = owner
        self.isOwned = isOwned
        self.registry = registry
        self.handlerStorage = handler
        self.siblings = siblings
    }

    /// A token for a subscription that never started (for example `freeWith` an owner that is
    /// already gone). It is already disposed.
    static func inert<E: Event>(for _: E.Type) -> EventToken {
        inert(eventTypeID: ObjectIdentifier(E.self))
    }

    /// ``inert(for:)`` for a type known by its identifier.
    static func inert(eventTypeID: ObjectIdentifier) -> EventToken {
        let token = EventToken(
            id: 0, eventTypeID: eventTypeID, key: nil, mode: .immediate,
            owner: nil, isOwned: false, registry: nil, handler: nil
        )
        _ = token.liveness.end()
        return token
    }

    /// Whether the subscription can still be delivered to.
    @inline(__always)
    var isLive: Bool { liveness.isLive }

    /// Marks this node (not its siblings) ended. Returns `true` for the one call that ended it.
    @inline(__always)
    func end() -> Bool { liveness.end() }

    /// Whether the subscription has ended: by ``dispose()``, its bag, its owner's deallocation
    /// (once the bus noticed), or the bus's deallocation.
    ///
    /// ```swift
    /// token.dispose()
    /// assert(token.isDisposed)
    /// ```
    public var isDisposed: Bool { !liveness.isLive }

    /// Ends the subscription.
    ///
    /// Thread-safe and idempotent: the first call ends it, later calls (on any thread) do nothing.
    /// After it returns no delivery starts (see the type's "Dispose guarantee"), the bus forgets the
    /// subscription in O(1), and its handler is released. Safe to call from inside a handler, the
    /// subscription's own included, and after the bus is deallocated (then it only marks the token).
    ///
    /// ```swift
    /// let token = bus.on(LoginEvent.self).next { print($0.userID) }
    /// token.dispose()
    /// bus.dispatch(LoginEvent(userID: "42"))   // prints nothing
    /// ```
    public func dispose() {
        guard end() else { return }
        // End the other keys' nodes here too, without the lock: if the bus is being deallocated
        // on another thread, `registry` is already nil, and they must not stay live.
        for sibling in siblings { _ = sibling.end() }
        registry?.remove(self)
    }

    /// Adds the token to `bag`, which disposes it when the bag is emptied or deallocated.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).next { print($0.userID) }.disposed(by: bag)
    /// ```
    public func disposed(by bag: DisposeBag) {
        bag.insert(self)
    }
}
