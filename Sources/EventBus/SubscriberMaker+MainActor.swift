extension SubscriberMaker {
    /// Delivers the events on the main actor, to a `@MainActor` handler that the compiler checks.
    ///
    /// The handler given to the returned maker's `next` is `@MainActor`, so it may read and write
    /// main-actor state (a view model, a view controller) and the compiler verifies it; a plain
    /// ``next(_:)`` handler that does the same is rejected at compile time.
    ///
    /// - **Dispatch on the main thread** (the main queue, the main actor): the handler is called
    ///   synchronously and has run when `dispatch` returns, like an unqueued subscriber.
    /// - **Dispatch on any other thread**: the call is enqueued on the main queue. Deliveries
    ///   enqueued for a subscriber run in the order of their dispatches (FIFO); a later dispatch made
    ///   on the main thread is delivered at once, so it can overtake deliveries still waiting.
    ///   The bus never uses `MainActor.assumeIsolated` off the main queue, so a background dispatch
    ///   cannot trap.
    ///
    /// The dispose guarantee holds for enqueued deliveries too: the bus checks, on the main queue
    /// right before each call, that the subscription is live (and its owner alive), so once
    /// `dispose()` has returned none of them starts. This step replaces an earlier
    /// ``atQueue(_:)``.
    ///
    /// ```swift
    /// @MainActor final class InboxModel {
    ///     var unread = 0
    ///     init(bus: EventBus) {
    ///         bus.on(ChatMessage.self).onMainActor().next { [weak self] message in
    ///             self?.unread += 1   // main-actor state, checked by the compiler
    ///         }
    ///     }
    /// }
    /// ```
    public func onMainActor() -> MainActorSubscriberMaker<E> {
        var copy = self
        copy.mode = .mainActor
        return MainActorSubscriberMaker(base: copy)
    }
}

extension OwnedSubscriberMaker {
    /// Delivers the events on the main actor, to a `@MainActor` handler that the compiler checks;
    /// see ``SubscriberMaker/onMainActor()``.
    ///
    /// With a `@MainActor` owner (a view controller, a view model) use the owner-passing `next`:
    /// the handler gets the owner, retained for the call, and may touch its main-actor state with
    /// no `[weak self]`. The handler never runs once the owner is gone, enqueued deliveries
    /// included.
    ///
    /// ```swift
    /// @MainActor final class ProfileViewModel: EventSubscribing {
    ///     var title = ""
    ///     func start() {
    ///         subscribe(ProfileRenamed.self).onMainActor().next { owner, event in
    ///             owner.title = event.name
    ///         }
    ///     }
    /// }
    /// ```
    public func onMainActor() -> OwnedMainActorSubscriberMaker<E, Owner> {
        var mainActorBase = base
        mainActorBase.mode = .mainActor
        return OwnedMainActorSubscriberMaker(base: OwnedSubscriberMaker(base: mainActorBase, owner: owner))
    }
}

/// A subscription maker whose handlers are `@MainActor`, returned by
/// ``SubscriberMaker/onMainActor()``.
///
/// Handlers run on the main actor: synchronously when the event is dispatched on the main thread,
/// otherwise enqueued on the main queue in dispatch order. The compiler checks that the handler
/// only touches main-actor state it may touch. Once the token is disposed, no delivery starts,
/// enqueued ones included.
///
/// ```swift
/// let token = bus.on(DownloadProgress.self)
///     .onMainActor()
///     .ofType(fileID)
///     .next { progress in progressView.progress = progress.fraction }
/// ```
public struct MainActorSubscriberMaker<E: Event>: Sendable {
    /// The maker being configured; its mode is `.mainActor`.
    var base: SubscriberMaker<E>

    /// Receives only events whose ``Event/eventType`` is `key`; see ``SubscriberMaker/ofType(_:)``.
    ///
    /// Chain it to subscribe to several keys with one token.
    ///
    /// ```swift
    /// bus.on(ChatMessage.self).onMainActor().ofType("room-7").next { message in
    ///     model.append(message)
    /// }
    /// ```
    public func ofType(_ key: String) -> MainActorSubscriberMaker<E> {
        MainActorSubscriberMaker(base: base.ofType(key))
    }

    /// Binds the subscription to `owner`'s lifetime; see ``SubscriberMaker/freeWith(_:)``.
    ///
    /// The bus holds `owner` weakly; after it is gone the handler is never called again, including
    /// deliveries already enqueued on the main queue.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).onMainActor().freeWith(self).next { owner, event in
    ///     owner.greeting = "Hello \(event.userID)"
    /// }
    /// ```
    public func freeWith<Owner: AnyObject>(_ owner: Owner?) -> OwnedMainActorSubscriberMaker<E, Owner> {
        OwnedMainActorSubscriberMaker(base: base.freeWith(owner))
    }

    /// Registers the `@MainActor` `handler` and returns the subscription's token.
    ///
    /// Runs on the main actor: before `dispatch` returns when dispatched on the main thread,
    /// otherwise soon after, enqueued on the main queue in dispatch order. The subscription lives
    /// until the token is disposed (dropping the token does not end it), a ``DisposeBag`` holding
    /// it is emptied or deallocated, or the bus is deallocated. Once `dispose()` has returned, no
    /// delivery starts, not even one already enqueued.
    ///
    /// ```swift
    /// let token = bus.on(LoginEvent.self).onMainActor().next { event in
    ///     model.userID = event.userID   // `model` is @MainActor
    /// }
    /// ```
    @discardableResult
    public func next(_ handler: @escaping @MainActor @Sendable (E) -> Void) -> EventToken {
        base.register(.mainActorEvent(handler), owner: nil, isOwned: false)
    }
}

/// A main-actor subscription maker bound to an owner, returned by
/// ``OwnedSubscriberMaker/onMainActor()`` or ``MainActorSubscriberMaker/freeWith(_:)``.
///
/// Its subscription ends when the owner is deallocated. Besides `next { event in }` it offers
/// `next { owner, event in }`, which hands a `@MainActor` owner to a `@MainActor` handler, retained
/// for the call, so the handler needs no `[weak self]`.
///
/// ```swift
/// @MainActor final class ChatViewController: UIViewController {   // NSObject: EventSubscribing already
///     override func viewDidLoad() {
///         super.viewDidLoad()
///         subscribe(ChatMessage.self).onMainActor().ofType("room-7").next { owner, message in
///             owner.append(message)   // main-actor method, checked by the compiler
///         }
///     }
/// }
/// ```
public struct OwnedMainActorSubscriberMaker<E: Event, Owner: AnyObject> {
    /// The owned maker being configured; its mode is `.mainActor`.
    var base: OwnedSubscriberMaker<E, Owner>

    /// Receives only events whose ``Event/eventType`` is `key`; see ``SubscriberMaker/ofType(_:)``.
    ///
    /// ```swift
    /// subscribe(ChatMessage.self).onMainActor().ofType("room-7").next { owner, message in
    ///     owner.append(message)
    /// }
    /// ```
    public func ofType(_ key: String) -> OwnedMainActorSubscriberMaker<E, Owner> {
        OwnedMainActorSubscriberMaker(base: base.ofType(key))
    }

    /// Rebinds the subscription to another owner; see ``SubscriberMaker/freeWith(_:)``.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).onMainActor().freeWith(session).next { session, event in
    ///     session.userID = event.userID
    /// }
    /// ```
    public func freeWith<NewOwner: AnyObject>(_ owner: NewOwner?) -> OwnedMainActorSubscriberMaker<E, NewOwner> {
        OwnedMainActorSubscriberMaker<E, NewOwner>(base: base.freeWith(owner))
    }

    /// Registers the `@MainActor` `handler`, called only while the owner is alive, and returns the
    /// subscription's token.
    ///
    /// Runs on the main actor, synchronously when dispatched on the main thread, otherwise enqueued
    /// on the main queue in dispatch order; an enqueued delivery whose owner has died meanwhile, or
    /// whose token has been disposed, does not run. If the owner is already gone, nothing is
    /// registered and the returned token is already disposed.
    ///
    /// ```swift
    /// subscribe(LoginEvent.self).onMainActor().next { [weak self] event in
    ///     self?.userID = event.userID
    /// }
    /// ```
    @discardableResult
    public func next(_ handler: @escaping @MainActor @Sendable (E) -> Void) -> EventToken {
        guard let owner = base.owner else { return .inert(for: E.self) }
        return base.base.register(.mainActorEvent(handler), owner: owner, isOwned: true)
    }

    /// Registers the `@MainActor` `handler`, which receives the owner (retained for the call) with
    /// each event, and returns the subscription's token.
    ///
    /// The handler runs on the main actor, and never once the owner is gone (enqueued deliveries
    /// included), so it needs no `[weak self]`: capture nothing and use `owner`. Synchronous when
    /// dispatched on the main thread, otherwise enqueued on the main queue in dispatch order. If the
    /// owner is already gone, nothing is registered and the returned token is already disposed.
    ///
    /// ```swift
    /// subscribe(ProfileRenamed.self).onMainActor().next { owner, event in
    ///     owner.title = event.name   // owner is a @MainActor view model
    /// }
    /// ```
    @discardableResult
    public func next(_ handler: @escaping @MainActor @Sendable (Owner, E) -> Void) -> EventToken where Owner: Sendable {
        guard let owner = base.owner else { return .inert(for: E.self) }
        return base.base.register(
            // The bus only ever passes back the owner this subscription was made with.
            .mainActorOwnerAndEvent { owner, event in handler(unsafeDowncast(owner, to: Owner.self), event) },
            owner: owner,
            isOwned: true
        )
    }
}

extension OwnedMainActorSubscriberMaker: Sendable where Owner: Sendable {}
