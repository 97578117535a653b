import Dispatch

/// A strongly typed publish/subscribe bus with subscriptions bound to their owner's lifetime.
///
/// Publishers call ``dispatch(_:)``; subscribers chain a ``SubscriberMaker`` from ``on(_:)`` and
/// finish with `next`. Events are routed by their exact static type and, optionally, by their
/// ``Event/eventType`` key.
///
/// ```swift
/// final class WelcomeBanner: EventSubscribing {
///     func start(on bus: EventBus) {
///         // Bound to `self`: ends when the banner is deallocated.
///         bus.on(LoginEvent.self).freeWith(self).next { owner, event in
///             owner.show(event.userID)
///         }
///     }
///     func show(_ userID: String) { print("Welcome, \(userID)") }
/// }
///
/// let bus = EventBus()
/// let banner = WelcomeBanner()
/// banner.start(on: bus)
/// bus.dispatch(LoginEvent(userID: "42"))   // prints "Welcome, 42"
/// ```
///
/// Use ``shared`` for the process-wide bus, or create buses of your own (one per module, one per
/// test) with ``init()``. A bus is thread-safe: subscribe, dispose and dispatch from any thread.
/// Handlers never run while the bus holds its lock.
public final class EventBus: EventConfigurable, Sendable {
    /// The process-wide bus, used by `subscribe(_:)` and by most apps.
    ///
    /// ```swift
    /// EventBus.shared.dispatch(LoginEvent(userID: "42"))
    /// ```
    public static let shared = EventBus()

    @usableFromInline let core: BusCore

    /// The bus's tracers (``EventConfigurable/tracer`` and ``EventConfigurable/addTracer(_:)``),
    /// composed into the core's one tracer.
    let tracers: TracerSet

    /// Opaque per-bus settings for the modules that plug into the core (the NotificationCenter
    /// bridge keeps the bus's center here). Immutable.
    package let extensionConfiguration: (any Sendable)?

    /// The serial queue behind ``dispatchOnBusQueue(_:)``.
    private let busQueue = DispatchQueue(label: "EventBus.busQueue")

    /// Creates an independent bus, with no subscribers.
    ///
    /// Subscriptions on a bus end when the bus is deallocated; disposing their tokens afterwards
    /// is a no-op.
    ///
    /// ```swift
    /// let bus = EventBus()   // e.g. one per test, or one per module
    /// ```
    public init() {
        core = BusCore(clock: .system)
        tracers = TracerSet(core: core)
        extensionConfiguration = nil
    }

    /// Creates an independent bus whose sticky events' time-to-live is measured on `clock`, which
    /// moves only when told: for tests of ``StickyPolicy/latest(ttl:)``.
    ///
    /// ```swift
    /// let clock = ManualEventClock()
    /// let bus = EventBus(clock: clock)
    /// bus.dispatch(LoginEvent(userID: "42"), sticky: .latest(ttl: .seconds(1)))
    /// clock.advance(by: .seconds(2))
    /// assert(bus.stickyCount(of: LoginEvent.self) == 0)
    /// ```
    public init(clock: ManualEventClock) {
        core = BusCore(clock: .manual(clock))
        tracers = TracerSet(core: core)
        extensionConfiguration = nil
    }

    /// Creates a bus whose plugged-in modules read `extensionConfiguration`.
    package init(extensionConfiguration: any Sendable) {
        core = BusCore(clock: .system)
        tracers = TracerSet(core: core)
        self.extensionConfiguration = extensionConfiguration
    }

    deinit {
        // End every subscription, so that deliveries already enqueued do not start, and release
        // the handlers, the tracer and the error handlers (after unlocking). Tokens still hold the
        // emptied registry, nothing else; tracer tokens, the closed tracer set.
        tracers.close()
        core.removeAll()
    }

    /// Starts a subscription to events of exactly type `type`.
    ///
    /// Nothing is registered until you call `next` on the returned maker; in between, chain
    /// ``SubscriberMaker/atQueue(_:)``, ``SubscriberMaker/ofType(_:)``,
    /// ``SubscriberMaker/freeWith(_:)`` and ``SubscriberMaker/onMainActor()`` in any order.
    ///
    /// ```swift
    /// let token = bus.on(ChatMessage.self)
    ///     .atQueue(.main)
    ///     .ofType("room-7")
    ///     .next { message in print(message.text) }
    /// ```
    @inlinable
    public func on<E: Event>(_ type: E.Type) -> SubscriberMaker<E, Never, EventDelivery.Synchronous> {
        SubscriberMaker(bus: self)
    }

    /// Starts a subscription to the events delivered as the supertype `type`: every event type
    /// that lists it in its ``DeliveredAsSupertypes/supertypes`` (usually a protocol existential,
    /// `(any ChatActivity).self`).
    ///
    /// The handler receives the converted value. The event's key applies (`ofType` filters on it),
    /// and the maker offers everything ``on(_:)`` does. Sticky events are kept under their exact
    /// type, so `replayingSticky()` replays only events dispatched as `type` itself.
    ///
    /// ```swift
    /// protocol ChatActivity: Sendable {}
    /// struct Typing: Event, ChatActivity, DeliveredAsSupertypes {
    ///     static let supertypes: [Supertype<Self>] = [.as((any ChatActivity).self) { $0 }]
    /// }
    /// let bus = EventBus()
    /// bus.on(anyOf: (any ChatActivity).self).next { activity in print(activity) }
    /// bus.dispatch(Typing())   // prints "Typing()"
    /// ```
    public func on<S: Sendable>(anyOf type: S.Type) -> SubscriberMaker<S, Never, EventDelivery.Synchronous> {
        SubscriberMaker(bus: self)
    }

    /// Delivers `event` as ``dispatch(_:)`` does, and keeps it for later subscribers as `policy`
    /// says, under its type and key.
    ///
    /// Subscribers made with ``SubscriberMaker/replayingSticky()`` receive the kept events when
    /// they subscribe; the others only ever see live events. Keeping the event and reaching the
    /// current subscribers happen in one critical section, so a subscriber that subscribes
    /// concurrently gets the event exactly once: live or replayed. A sticky dispatch is never a
    /// dead event. A bridged notification (`NotificationEvent`, from `EventBusFoundation`) cannot
    /// be kept: the bridge reports it and dispatches it as a plain one.
    ///
    /// ```swift
    /// bus.dispatch(LoginEvent(userID: "42"), sticky: .latest)
    /// ```
    public func dispatch<E: Event>(_ event: E, sticky policy: StickyPolicy) {
        core.dispatch(event, key: event.routingKey, on: self, sticky: StickyDispatch(policy, for: E.self))
    }

    /// Dispatches `event` asynchronously on the bus's own serial queue.
    ///
    /// Calls are dispatched in the order they were made. Use it to publish from a thread that must
    /// not run subscribers' code; synchronous subscribers then run on the bus queue.
    ///
    /// ```swift
    /// bus.dispatchOnBusQueue(LoginEvent(userID: "42"))
    /// ```
    public func dispatchOnBusQueue<E: Event>(_ event: E) {
        let context = core.captureContext()
        busQueue.async { self.dispatch(event, restoring: context) }
    }

    /// ``dispatchOnBusQueue(_:)`` of an event a bridge received from another process, with the
    /// context its sender carried: `context` is what the bus's propagator made of the envelope's
    /// headers (``EventContextPropagator/context(fromHeaders:)``). On the bus queue, the propagator
    /// set now restores it around the dispatch, told `hop` (`EventBusRemote`:
    /// ``EventContextDelivery/Hop/remote(wireName:)``): the one restore of the event's way in, so a
    /// tracing propagator makes one span for it. With no propagator set, a plain deferred dispatch.
    ///
    /// ```swift
    /// @_spi(Integrations) import EventBus
    ///
    /// if let context = bus.contextPropagator?.context(fromHeaders: headers) {
    ///     bus.dispatchOnBusQueue(event, restoring: context, hop: .remote(wireName: "app.login.v1"))
    /// }
    /// ```
    @_spi(Integrations)
    public func dispatchOnBusQueue<E: Event>(_ event: E, restoring context: any Sendable, hop: EventContextDelivery.Hop)
    {
        let captured = core.contextPropagator.map { CapturedContext(propagator: $0, value: context) }
        busQueue.async { self.dispatch(event, restoring: captured, hop: hop) }
    }

    /// Dispatches `event` on the main queue: synchronously when called on the main queue (the main
    /// thread), otherwise enqueued to the main queue (in call order).
    ///
    /// ```swift
    /// bus.dispatchOnMain(LoginEvent(userID: "42"))   // from a background thread
    /// ```
    public func dispatchOnMain<E: Event>(_ event: E) {
        if isOnMainQueue {
            dispatch(event)
        } else {
            let context = core.captureContext()
            DispatchQueue.main.async { self.dispatch(event, restoring: context) }
        }
    }

    /// A deferred dispatch, where it runs: with the caller's context restored, if one was captured
    /// (the propagator told `hop`).
    private func dispatch<E: Event>(
        _ event: E, restoring context: CapturedContext?, hop: EventContextDelivery.Hop = .deferredDispatch
    ) {
        core.withContext(context, EventContextDelivery(event, hop: hop, subscriptionID: nil)) {
            dispatch(event)
        }
    }

    /// Reclaims now every subscription whose owner (see ``SubscriberMaker/freeWith(_:)``) has been
    /// deallocated, releasing its handler.
    ///
    /// You rarely need this: such subscriptions are never called, and the bus reclaims them at the
    /// next dispatch that reaches them, or through its incremental sweep, which checks a few owned
    /// subscriptions on every subscribe, dispose and dispatch (on every eighth dispatch of a type
    /// nobody subscribes to, which otherwise takes no lock). Call it when you want their captured
    /// resources released at a known point, as tests do. Runs in batches, taking the bus lock
    /// briefly for each: other threads are never stalled for long.
    ///
    /// The owners of main-actor and `atQueue(.main)` subscriptions are only ever released on the
    /// main queue: called elsewhere, `purge()` leaves those subscriptions to a pass it schedules on
    /// the main queue.
    ///
    /// ```swift
    /// var screen: Screen? = Screen(bus: bus)
    /// screen = nil
    /// bus.purge()   // the screen's handlers, and what they captured, are released now
    /// ```
    public func purge() {
        core.purge()
    }

    /// The number of live subscriptions on this bus. O(1).
    ///
    /// A subscription whose owner has died is counted until the bus reclaims it (see ``purge()``).
    /// Internal subscriptions (the test kit's, see ``SubscriptionInfo/isInternal``) are not
    /// counted; a NotificationCenter bridge is the app's, and is.
    ///
    /// ```swift
    /// assert(bus.subscriptionCount == 0)
    /// ```
    public var subscriptionCount: Int { core.count }

    /// The number of live subscriptions to events of type `type` on this bus, internal ones
    /// excluded. O(1).
    ///
    /// ```swift
    /// assert(bus.subscriptionCount(of: LoginEvent.self) == 0)
    /// ```
    public func subscriptionCount<E>(of type: E.Type) -> Int {
        core.userCount(ofTypeID: ObjectIdentifier(type))
    }

    /// Every live subscription on this bus, internal ones included, in subscription order: who
    /// listens to what, from which line. A snapshot: subscriptions made or ended while it is taken
    /// may or may not be in it.
    ///
    /// Costs O(N) in the bus's subscriptions; the bus lock is taken for 256 of them at a time, so
    /// other threads' bus calls wait at most that long. Loads each owner (see
    /// ``SubscriptionInfo/isOwnerAlive``). For debugging and tests, not for a hot path.
    ///
    /// ```swift
    /// for info in bus.subscriptions where !info.isInternal { print(info) }
    /// // #1 MyApp.LoginEvent synchronous, normal, owner MyApp.ProfileScreen (alive), made at MyApp/Profile.swift:30
    /// ```
    public var subscriptions: [SubscriptionInfo] { core.subscriptionInfos(ofTypeID: nil) }

    /// The live subscriptions to events of type `type` (or, for an ``on(anyOf:)`` type, to that
    /// type), as ``subscriptions`` lists them. O(N) in the bus's subscriptions.
    ///
    /// ```swift
    /// print(bus.subscriptions(of: LoginEvent.self).map(\.callSite))   // ["MyApp/Profile.swift:30"]
    /// ```
    public func subscriptions<E>(of type: E.Type) -> [SubscriptionInfo] {
        core.subscriptionInfos(ofTypeID: ObjectIdentifier(type))
    }

    /// This bus's settings: its tracers, context propagator and handler-error handler, which
    /// ``EventConfigurable`` offers as members of the bus itself (`bus.tracer`, `bus.addTracer(_:)`,
    /// `bus.contextPropagator`, `bus.handlerErrorHandler`).
    ///
    /// ```swift
    /// let bus = EventBus()
    /// bus.handlerErrorHandler = { failure in print(failure) }   // through this configuration
    /// ```
    public var configuration: EventConfiguration { EventConfiguration(self) }

    /// The deliveries this bus enqueued on a queue, the main queue or an actor that have not run yet (nor
    /// found their subscription ended): what a metrics gauge of queued work samples. O(1), two
    /// atomic loads, no lock; a snapshot that may be stale by the time it is read.
    ///
    /// ```swift
    /// let bus = EventBus()
    /// _ = bus.on(LoginEvent.self).atQueue(.global()).next { _ in }
    /// bus.dispatch(LoginEvent(userID: "42"))
    /// print(bus.enqueuedDeliveryCount)   // 1 until the queue has run it, then 0
    /// ```
    public var enqueuedDeliveryCount: Int { core.inFlight.count }

    /// Waits until every delivery this bus enqueued on a queue, the main queue or an actor before the call
    /// has run, or `deadline` (`DispatchTime.uptimeNanoseconds`) passes; returns how many of those
    /// were still waiting then, at most, 0 if none was; throws `CancellationError` when the task is
    /// cancelled (`EventBusTesting`'s `settle()`).
    package func settleEnqueued(deadline: UInt64?) async throws -> Int {
        try await core.inFlight.waitForThoseEnqueuedBefore(deadline: deadline)
    }

    /// The last handler errors on this bus (at most 64) and how many there were in all
    /// (`EventBusTesting`'s `requireNoHandlerErrors()`).
    package var handlerErrors: (recent: [HandlerError], count: Int) { core.handlerErrors }

    /// Called, on the dispatching thread and with no lock held, for each ``dispatch(_:)`` that
    /// started or enqueued no delivery: see ``DeadEvent`` for exactly when. The bus's tracers
    /// receive every dead event too (``TraceRecord/deadEvent(_:)``), whether this is set or not.
    /// `nil` (the default) and no tracer: dead events cost nothing and are not reported.
    ///
    /// A closure rather than an event, so that it cannot recurse: dispatching from it is allowed
    /// and is an ordinary dispatch.
    ///
    /// ```swift
    /// let bus = EventBus()
    /// bus.deadEventHandler = { dead in print("unhandled:", dead.event) }
    /// ```
    public var deadEventHandler: (@Sendable (DeadEvent) -> Void)? {
        get { core.deadEventHandler }
        set { core.deadEventHandler = newValue }
    }

    /// Delivers `event` to the subscribers of `key` and the unkeyed ones, bypassing `E`'s hooks:
    /// how hooks hand an event to the bus's subscribers.
    package func deliver<E: Event>(_ event: E, key: String?) {
        core.deliverPastHooks(event, key: key, on: self)
    }

    /// ``deliver(_:key:)`` to the subscribers of `key` only (the notification bridge's
    /// sender-filtered deliveries).
    package func deliverToKeyed<E: Event>(_ event: E, key: String?) {
        core.deliverPastHooksToKeyed(event, key: key, on: self)
    }

    /// The number of sticky events kept for `type` (every key), after letting go of the expired
    /// ones of the bus: a few at a time, letting other threads take the bus's lock in between. O(1)
    /// amortised (each event expires once).
    ///
    /// ```swift
    /// assert(bus.stickyCount(of: LoginEvent.self) == 0)
    /// ```
    public func stickyCount<E: Event>(of type: E.Type) -> Int {
        core.stickyCount(of: type)
    }

    /// The hooks of the hooked event type `E` on this bus (made on first use).
    package func hooks<E: HookedEvent>(of type: E.Type) -> any EventTypeHooks {
        core.hooks(of: type, on: self)
    }
}
