public import Foundation

extension EventBus {
    /// Feeds subscribers of `type` from the notifications named `name` (optionally only those
    /// posted by `object`): legacy posters reach typed subscribers.
    ///
    /// Each such notification posted to the bus's ``notificationCenter`` (by legacy code, or by
    /// ``dispatch(_:)-(Notification)``) goes through `converter`; a non-`nil` result is delivered to the
    /// bus's subscribers of `type`, on the posting thread (or on their queues). A notification
    /// the converter returns `nil` for is skipped and reported as
    /// ``NotificationBridgeIssue/conversionFailed(_:eventType:)``, never a crash.
    ///
    /// Loops are impossible by construction: an event that comes from a notification is handed to
    /// the subscribers only, never dispatched again, so it is never posted back (even if `type` is
    /// also bridged the other way with ``bridge(_:toNotification:)``); and a notification that this
    /// bus posted for `type` is not converted back to `type`.
    ///
    /// The bridge is a subscription to `name` (it counts in `subscriptionCount(of:
    /// NotificationEvent.self)`): it lives until its token is disposed, its bag is emptied, or the
    /// bus is deallocated. The converter runs without any bus lock held.
    ///
    /// ```swift
    /// struct UserLoggedIn: Event { let userID: String }
    ///
    /// bus.bridge(notification: .userDidLogIn, to: UserLoggedIn.self) { notification in
    ///     (notification.userInfo?["id"] as? String).map(UserLoggedIn.init)
    /// }
    /// bus.on(UserLoggedIn.self).next { event in print(event.userID) }
    ///
    /// NotificationCenter.default.post(name: .userDidLogIn, object: nil, userInfo: ["id": "42"])   // prints 42
    /// ```
    @discardableResult
    public func bridge<E: Event>(
        notification name: Notification.Name,
        object: AnyObject? = nil,
        to type: E.Type,
        converter: @escaping @Sendable (Notification) -> E?
    ) -> EventToken {
        let origin = BridgeOrigin(bus: registry, eventType: E.self)
        // Weak: the subscription lives in the registry, so a strong capture would be a cycle.
        return on(notification: name, object: object).next { [weak registry, weak hooks = notificationHooks] event in
            guard let registry, let hooks else { return }
            // A notification this bus posted for `E` came from a dispatch of `E`, whose subscribers
            // already have it.
            if BridgeOrigin.of(event.notification) == origin { return }
            guard let converted = converter(event.notification) else {
                hooks.report(.conversionFailed(event, eventType: E.self))
                return
            }
            registry.deliver(converted, key: converted.routingKey)
        }
    }

    /// Feeds subscribers of `type` from several notification names, each mapped to one event
    /// value: a shorthand for ``bridge(notification:object:to:converter:)`` with one token.
    ///
    /// ```swift
    /// enum Connectivity: Event { case online, offline }
    ///
    /// bus.bridge(notifications: [.reachabilityDidConnect: .online, .reachabilityDidDrop: .offline])
    /// bus.on(Connectivity.self).next { state in print(state) }
    /// ```
    @discardableResult
    public func bridge<E: Event>(notifications events: [Notification.Name: E]) -> EventToken {
        let origin = BridgeOrigin(bus: registry, eventType: E.self)
        guard !events.isEmpty else {
            notificationHooks.report(.unnamedSubscriptionRefused)
            return .inert(for: NotificationEvent.self)
        }
        var maker = on(NotificationEvent.self)
        for name in events.keys.sorted(by: { $0.rawValue < $1.rawValue }) { maker = maker.ofType(name) }
        return maker.next { [weak registry] event in
            guard let registry, BridgeOrigin.of(event.notification) != origin,
                  let converted = events[event.name] else { return }
            registry.deliver(converted, key: converted.routingKey)
        }
    }

    /// Posts a notification to the bus's ``notificationCenter`` for every dispatch of `type`:
    /// typed publishers reach legacy observers.
    ///
    /// ``dispatch(_:)-(E)`` of a bridged type first delivers the event to its subscribers, as
    /// usual, then posts `converter(event)`, on the dispatching thread (also when the dispatch came
    /// from ``dispatchOnBusQueue(_:)`` or ``dispatchOnMain(_:)``). Legacy observers and the bus's
    /// subscribers to that name see the notification once. Events that came from a notification
    /// through ``bridge(notification:object:to:converter:)`` are not posted: no echo, no loop.
    ///
    /// The posted notification's `userInfo` carries one extra entry, under the key
    /// `"EventBus.bridgeOrigin"`, which is how this bus recognises its own posts.
    ///
    /// The bridge ends when its token is disposed, its bag is emptied, or the bus is deallocated.
    /// It counts as a subscription of `type`. Bridging ``NotificationEvent`` itself is refused
    /// (already disposed token, ``NotificationBridgeIssue/bridgeRefused(eventType:)``).
    ///
    /// ```swift
    /// struct CartChanged: Event { let count: Int }
    ///
    /// bus.bridge(CartChanged.self) { event in
    ///     Notification(name: .cartDidChange, object: nil, userInfo: ["count": event.count])
    /// }
    /// bus.dispatch(CartChanged(count: 3))   // typed subscribers, then .cartDidChange observers
    /// ```
    @discardableResult
    public func bridge<E: Event>(
        _ type: E.Type,
        toNotification converter: @escaping @Sendable (E) -> Notification
    ) -> EventToken {
        guard registry.installHooks(for: E.self, { OutboundHooks<E>(registry: registry) }) != nil else {
            notificationHooks.report(.bridgeRefused(eventType: E.self))
            return .inert(for: E.self)
        }
        let origin = BridgeOrigin(bus: registry, eventType: E.self)
        let center = notificationCenter
        return on(E.self).ofType(OutboundHooks<E>.key).next { event in
            center.post(origin.mark(converter(event)))
        }
    }
}

/// The hooks of an event type bridged to notifications: a dispatch delivers to the subscribers,
/// then to the outbound bridges, which are subscriptions under a reserved key that no event has.
/// Deliveries that bypass hooks (those from notifications) therefore never reach the bridges.
final class OutboundHooks<E: Event>: EventHooks<E>, @unchecked Sendable {
    // @unchecked Sendable: `registry` is set in init and never written again (a `weak var` only
    // because `weak let` needs Swift 6.2).

    /// The key of outbound bridge subscriptions. It starts with U+0000, so no sensible event key
    /// equals it; `dispatch` copes with one that does.
    static var key: String { "\u{0}EventBus.outboundNotificationBridge" }

    private weak var registry: Registry?

    init(registry: Registry) {
        self.registry = registry
    }

    override func dispatch(_ event: E) {
        guard let registry else { return }
        // An event whose own key is the reserved one (an id off the wire, say) reaches the unkeyed
        // subscribers only: the list under that key holds the outbound bridges, reached once, below.
        let key = event.routingKey
        registry.deliver(event, key: key == Self.key ? nil : key)
        registry.deliver(event, key: Self.key, includingUnkeyed: false)
    }
}

/// Tags the notifications a bus posts for a typed event, so that the same bus does not convert
/// them back into that event.
struct BridgeOrigin: Hashable, Sendable {
    static let userInfoKey = "EventBus.bridgeOrigin"

    let bus: ObjectIdentifier
    let eventType: ObjectIdentifier

    init<E: Event>(bus: Registry, eventType _: E.Type) {
        self.bus = ObjectIdentifier(bus)
        self.eventType = ObjectIdentifier(E.self)
    }

    static func of(_ notification: Notification) -> BridgeOrigin? {
        notification.userInfo?[userInfoKey] as? BridgeOrigin
    }

    func mark(_ notification: Notification) -> Notification {
        var userInfo = notification.userInfo ?? [:]
        userInfo[Self.userInfoKey] = self
        return Notification(name: notification.name, object: notification.object, userInfo: userInfo)
    }
}
