import Dispatch

/// A strongly typed publish/subscribe bus with subscriptions bound to their owner's lifetime.
///
/// Publishers call ``dispatch(_:)-(E)``; subscribers chain a ``SubscriberMaker`` from ``on(_:)`` and
/// finish with `next`. Events are routed by their exact static type and, optionally, by their
/// ``Event/eventType`` key.
///
/// ```swift
/// struct LoginEvent: Event { let userID: String }
///
/// // Subscriber, bound to `self`: ends when `self` is deallocated.
/// EventBus.shared.on(LoginEvent.self).freeWith(self).next { owner, event in
///     owner.showWelcome(for: event.userID)
/// }
///
/// // Publisher
/// EventBus.shared.dispatch(LoginEvent(userID: "42"))
/// ```
///
/// Use ``shared`` for the process-wide bus, or create buses of your own (one per module, one per
/// test) with ``init()``. A bus is thread-safe: subscribe, dispose and dispatch from any thread.
///
/// ## Cost
///
/// Subscribing and disposing are O(1) whatever the number of subscribers. A dispatch takes the bus
/// lock once for the whole fan-out, to copy a cached snapshot of the subscribers, and allocates
/// nothing in steady state (the snapshot is rebuilt only after a subscribe or dispose). It takes the
/// lock again only to reclaim: when it found a dead owner, or fell on the amortised sweep. Event
/// types routed through the NotificationCenter bridge take a few acquisitions more. Handlers never
/// run while the bus holds its lock.
public final class EventBus: Sendable {
    /// The process-wide bus, used by `subscribe(_:)` and by most apps.
    ///
    /// ```swift
    /// EventBus.shared.dispatch(LoginEvent(userID: "42"))
    /// ```
    public static let shared = EventBus()

    let registry: Registry

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
        registry = Registry()
    }

    /// Creates a bus whose event types with hooks read `hookConfiguration` (opaque to the core; the
    /// NotificationCenter bridge's `init(notificationCenter:)` passes its center here).
    init(hookConfiguration: any Sendable) {
        registry = Registry(hookConfiguration: hookConfiguration)
    }

    /// Starts a subscription to events of exactly type `type`.
    ///
    /// Nothing is registered until you call `next` on the returned maker; in between, chain
    /// ``SubscriberMaker/atQueue(_:)``, ``SubscriberMaker/ofType(_:)`` and
    /// ``SubscriberMaker/freeWith(_:)`` in any order.
    ///
    /// ```swift
    /// let token = bus.on(ChatMessage.self)
    ///     .atQueue(.main)
    ///     .ofType("room-7")
    ///     .next { message in render(message) }
    /// ```
    public func on<E: Event>(_ type: E.Type) -> SubscriberMaker<E> {
        SubscriberMaker(bus: self)
    }

    /// Delivers `event` to every subscriber of its type and key.
    ///
    /// Subscribers without a queue are called **synchronously on the calling thread**, one after
    /// the other, before `dispatch` returns; subscribers made with ``SubscriberMaker/atQueue(_:)``
    /// get the event asynchronously on their queue. Order: the subscribers of the event's
    /// ``Event/eventType`` key first, in subscription order, then the unkeyed subscribers, in
    /// subscription order.
    ///
    /// From inside a handler you may dispatch again (delivered immediately, depth-first),
    /// subscribe (the new subscriber does not receive the event being delivered) and dispose any
    /// subscription (a disposed subscriber not yet called for this event is not called).
    ///
    /// A dispatch with no subscriber delivers nothing and costs one lock acquisition (it still
    /// counts toward the amortised sweep).
    ///
    /// ```swift
    /// bus.dispatch(LoginEvent(userID: "42"))
    /// ```
    public func dispatch<E: Event>(_ event: E) {
        let key = event.routingKey
        var sweepDue = false
        let route = registry.snapshots(for: E.self, key: key, sweepDue: &sweepDue)
        // The periodic sweep runs after unlocking, even when nothing subscribes to `E`.
        if sweepDue { registry.purge() }
        guard let (keyed, unkeyed, isHooked) = route else { return }
        // Event types with hooks (the NotificationCenter bridge's) route their dispatches themselves.
        if isHooked {
            registry.hooks(for: E.self)?.dispatch(event)
            return
        }
        registry.fanOut(event, keyed: keyed, unkeyed: unkeyed)
    }

    /// Dispatches `event` asynchronously on the bus's own serial queue.
    ///
    /// Calls are dispatched in the order they were made. Use it to publish from a thread that must
    /// not run subscribers' code; synchronous subscribers then run on the bus queue.
    ///
    /// ```swift
    /// bus.dispatchOnBusQueue(SyncFinished(changes: 12))
    /// ```
    public func dispatchOnBusQueue<E: Event>(_ event: E) {
        busQueue.async { self.dispatch(event) }
    }

    /// Dispatches `event` on the main queue: synchronously when called on the main queue (the main
    /// thread), otherwise enqueued to the main queue (in call order).
    ///
    /// ```swift
    /// bus.dispatchOnMain(DownloadFinished(url: url))   // from a background thread
    /// ```
    public func dispatchOnMain<E: Event>(_ event: E) {
        if isOnMainQueue {
            dispatch(event)
        } else {
            DispatchQueue.main.async { self.dispatch(event) }
        }
    }

    /// Removes now every subscription whose owner (see ``SubscriberMaker/freeWith(_:)``) has been
    /// deallocated, releasing their handlers.
    ///
    /// You rarely need this: such subscriptions are never called, and the bus removes them at the
    /// next dispatch that reaches them (of their event type, and key if they have one), or at the
    /// latest during a periodic sweep, which runs every `max(256, subscriptionCount)` bus
    /// operations (subscribe, dispose or dispatch). Call it when
    /// you want their captured resources released at a known point, as tests do.
    ///
    /// ```swift
    /// screen = nil
    /// bus.purge()   // the screen's handlers, and what they captured, are released now
    /// ```
    public func purge() {
        registry.purge()
    }

    /// The number of subscriptions registered on this bus.
    ///
    /// A subscription whose owner has died is counted until the bus reclaims it (see ``purge()``).
    ///
    /// ```swift
    /// #expect(bus.subscriptionCount == 0)
    /// ```
    public var subscriptionCount: Int { registry.count() }

    /// The number of subscriptions to events of type `type` registered on this bus.
    ///
    /// ```swift
    /// #expect(bus.subscriptionCount(of: LoginEvent.self) == 2)
    /// ```
    public func subscriptionCount<E: Event>(of type: E.Type) -> Int {
        registry.count(of: ObjectIdentifier(type))
    }
}
