public import Dispatch

/// The chained builder for a subscription, returned by ``EventBus/on(_:)``.
///
/// Each step returns a new maker (it is a value type), so a partly configured maker can be kept
/// and reused. Nothing is registered until ``next(_:)``.
///
/// ```swift
/// bus.on(ChatMessage.self)        // events of this type...
///     .atQueue(renderQueue)       // ...delivered on this queue...
///     .ofType("room-7")           // ...only with this key...
///     .freeWith(self)             // ...until self is deallocated...
///     .next { owner, message in   // ...to this handler.
///         owner.render(message)
///     }
/// ```
public struct SubscriberMaker<E: Event>: Sendable {
    let bus: EventBus
    var keys: [String] = []
    var mode: DeliveryMode = .immediate

    init(bus: EventBus) {
        self.bus = bus
    }

    /// Delivers the events asynchronously on `queue` instead of synchronously on the dispatching
    /// thread.
    ///
    /// On a serial queue the subscriber gets events in dispatch order. The dispose guarantee covers
    /// deliveries already enqueued: once `dispose()` returns, none of them starts.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).atQueue(.main).next { event in label.text = event.userID }
    /// ```
    public func atQueue(_ queue: DispatchQueue) -> SubscriberMaker<E> {
        var copy = self
        copy.mode = .queue(queue)
        return copy
    }

    /// Receives only events whose ``Event/eventType`` is `key`.
    ///
    /// Chain it to subscribe to several keys with one token; a key given twice counts once. Without
    /// `ofType`, the subscriber receives every event of the type, whatever its key. Keyed
    /// subscribers are called before unkeyed ones.
    ///
    /// ```swift
    /// let token = bus.on(ChatMessage.self).ofType("room-7").ofType("room-9").next { ... }
    /// token.dispose()   // ends both
    /// ```
    public func ofType(_ key: String) -> SubscriberMaker<E> {
        var copy = self
        if !copy.keys.contains(key) { copy.keys.append(key) }
        return copy
    }

    /// Binds the subscription to `owner`'s lifetime: it ends when `owner` is deallocated.
    ///
    /// The bus holds `owner` weakly. After `owner` is gone its handler is never called again, and
    /// the handler (with what it captured) is released at the next dispatch that reaches it, at the
    /// bus's periodic sweep, or at ``EventBus/purge()``, whichever comes first. Passing `nil`, or an
    /// owner that is deallocated before `next`, yields an inert, already disposed token.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).freeWith(self).next { owner, event in owner.render(event) }
    /// ```
    public func freeWith<Owner: AnyObject>(_ owner: Owner?) -> OwnedSubscriberMaker<E, Owner> {
        OwnedSubscriberMaker(base: self, owner: owner)
    }

    /// Registers `handler` and returns the subscription's token.
    ///
    /// The handler runs on the dispatching thread, before `dispatch` returns, or on the
    /// ``atQueue(_:)`` queue. The subscription lives until the token is disposed (dropping the token
    /// does not end it), a ``DisposeBag`` holding it is emptied or deallocated, or the bus is
    /// deallocated.
    ///
    /// ```swift
    /// let token = bus.on(LoginEvent.self).next { event in print(event.userID) }
    /// ```
    @discardableResult
    public func next(_ handler: @escaping @Sendable (E) -> Void) -> EventToken {
        register(.event(handler), owner: nil, isOwned: false)
    }

    func register(_ handler: Handler<E>, owner: AnyObject?, isOwned: Bool) -> EventToken {
        bus.registry.subscribe(
            Registry.Request(E.self, keys: keys, mode: mode, owner: owner, isOwned: isOwned, handler: handler),
            makeBucket: { Bucket<E>() }
        )
    }
}

/// A ``SubscriberMaker`` bound to an owner with ``SubscriberMaker/freeWith(_:)``.
///
/// Its subscription ends when the owner is deallocated. Besides `next { event in }` it offers
/// `next { owner, event in }`, which hands the handler the owner, retained for the call, so the
/// handler needs no `[weak self]` and cannot form a retain cycle through the bus.
///
/// ```swift
/// final class InboxScreen: EventSubscribing {
///     func start() {
///         subscribe(ChatMessage.self).ofType("room-7").next { owner, message in
///             owner.append(message)
///         }
///     }
/// }
/// ```
public struct OwnedSubscriberMaker<E: Event, Owner: AnyObject> {
    var base: SubscriberMaker<E>
    weak var owner: Owner?

    /// Delivers the events asynchronously on `queue`; see ``SubscriberMaker/atQueue(_:)``.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).atQueue(.main).next { owner, event in owner.render(event) }
    /// ```
    public func atQueue(_ queue: DispatchQueue) -> OwnedSubscriberMaker<E, Owner> {
        OwnedSubscriberMaker(base: base.atQueue(queue), owner: owner)
    }

    /// Receives only events whose ``Event/eventType`` is `key`; see ``SubscriberMaker/ofType(_:)``.
    ///
    /// ```swift
    /// subscribe(ChatMessage.self).ofType("room-7").next { owner, message in owner.append(message) }
    /// ```
    public func ofType(_ key: String) -> OwnedSubscriberMaker<E, Owner> {
        OwnedSubscriberMaker(base: base.ofType(key), owner: owner)
    }

    /// Rebinds the subscription to another owner; see ``SubscriberMaker/freeWith(_:)``.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).freeWith(screen).freeWith(session)   // bound to `session`
    /// ```
    public func freeWith<NewOwner: AnyObject>(_ owner: NewOwner?) -> OwnedSubscriberMaker<E, NewOwner> {
        OwnedSubscriberMaker<E, NewOwner>(base: base, owner: owner)
    }

    /// Registers `handler`, called only while the owner is alive (the owner is retained for the
    /// duration of each call), and returns the subscription's token.
    ///
    /// Runs on the dispatching thread, or on the ``atQueue(_:)`` queue. If the owner is already
    /// gone, nothing is registered and the returned token is already disposed.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).next { [weak self] event in self?.render(event) }
    /// ```
    @discardableResult
    public func next(_ handler: @escaping @Sendable (E) -> Void) -> EventToken {
        guard let owner else { return .inert(for: E.self) }
        return base.register(.event(handler), owner: owner, isOwned: true)
    }

    /// Registers `handler`, which receives the owner (retained for the call) with each event, and
    /// returns the subscription's token.
    ///
    /// The handler never runs once the owner is gone, so it needs no `[weak self]`: capture nothing
    /// and use `owner`. Runs on the dispatching thread, or on the ``atQueue(_:)`` queue; for an owner
    /// isolated to the main actor, use `onMainActor()` instead. If the owner is already gone,
    /// nothing is registered and the returned token is already disposed.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).next { owner, event in owner.render(event) }
    /// ```
    @discardableResult
    public func next(_ handler: @escaping @Sendable (Owner, E) -> Void) -> EventToken where Owner: Sendable {
        guard let owner else { return .inert(for: E.self) }
        return base.register(
            // The bus only ever passes back the owner this subscription was made with.
            .ownerAndEvent { owner, event in handler(unsafeDowncast(owner, to: Owner.self), event) },
            owner: owner,
            isOwned: true
        )
    }
}

extension OwnedSubscriberMaker: Sendable where Owner: Sendable {}
