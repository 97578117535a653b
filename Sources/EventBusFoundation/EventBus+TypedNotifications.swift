@_spi(Integrations) public import EventBus
public import Foundation

extension EventBus {
    /// Feeds subscribers of `type` from the notifications named `name` (optionally only those
    /// posted by `object`): legacy posters reach typed subscribers.
    ///
    /// Each such notification posted to the bus's ``notificationCenter`` (by legacy code, or by
    /// ``post(_:)``) goes through `converter`; a non-`nil` result is delivered to
    /// the bus's subscribers of `type`, on the posting thread (or on their queues, or on the main
    /// actor for ``/EventBus/SubscriberMaker/onMainActor()`` subscribers). A notification
    /// the converter returns `nil` for is skipped and reported as
    /// ``NotificationBridgeIssue/conversionFailed(_:type:)``, never a crash.
    ///
    /// Loops are impossible by construction: an event that comes from a notification is handed to
    /// the subscribers only, never dispatched again, so it is never posted back (even if `type` is
    /// also bridged the other way with ``bridge(_:file:line:toNotification:)``); and a notification that this
    /// bus posted for `type` is not converted back to `type`.
    ///
    /// The bridge is a subscription the app made, to `name`: it counts in
    /// `subscriptionCount(of: NotificationEvent.self)`, is listed in ``/EventBus/EventBus/subscriptions``
    /// with the line that made it, and a bridge left live fails EventBusTesting's
    /// `requireNoLiveSubscriptions()`. It lives until its token is disposed, its bag is emptied, or
    /// the bus is deallocated. The converter runs without any bus lock held.
    ///
    /// ```swift
    /// struct UserLoggedIn: Event { let userID: String }
    ///
    /// bus.bridge(notification: .userDidLogIn, to: UserLoggedIn.self) { notification in
    ///     (notification.userInfo?["id"] as? String).map(UserLoggedIn.init)
    /// }
    /// let token = bus.on(UserLoggedIn.self).next { event in print(event.userID) }
    ///
    /// NotificationCenter.default.post(name: .userDidLogIn, object: nil, userInfo: ["id": "42"])   // prints 42
    /// ```
    @discardableResult
    public func bridge<E: Event>(
        notification name: Notification.Name,
        object: AnyObject? = nil,
        to type: E.Type,
        file: StaticString = #fileID, line: UInt = #line,
        converter: @escaping @Sendable (Notification) -> E?
    ) -> EventToken {
        let origin = BridgeOrigin(bus: self, eventType: E.self)
        let hooks = notificationHooks
        // Weak: the subscription lives in the bus, so a strong capture would be a cycle.
        return on(notification: name, object: object).next(file: file, line: line) { [weak self] event in
            guard let self else { return }
            // A notification this bus posted for `E` came from a dispatch of `E`, whose subscribers
            // already have it.
            if BridgeOrigin.isPosting(event.notification, from: origin) { return }
            guard let converted = converter(event.notification) else {
                hooks.report(.conversionFailed(event, type: E.self))
                return
            }
            BridgeOrigin.deliverInbound(converted, on: self)
        }
    }

    /// Feeds subscribers of `type` from several notification names, each mapped to one event
    /// value: a shorthand for ``bridge(notification:object:to:file:line:converter:)`` with one
    /// token, listed and counted as that one is.
    ///
    /// ```swift
    /// enum Connectivity: Event { case online, offline }
    ///
    /// bus.bridge(notifications: [.reachabilityDidConnect: .online, .reachabilityDidDrop: .offline])
    /// let token = bus.on(Connectivity.self).next { state in print(state) }
    /// ```
    @discardableResult
    public func bridge<E: Event>(
        notifications events: [Notification.Name: E], file: StaticString = #fileID, line: UInt = #line
    ) -> EventToken {
        let origin = BridgeOrigin(bus: self, eventType: E.self)
        var maker = on(NotificationEvent.self)
        for name in events.keys.sorted(by: { $0.rawValue < $1.rawValue }) { maker = maker.ofType(name) }
        // No name: the bridge's hooks refuse the subscription and report it.
        return maker.next(file: file, line: line) { [weak self] event in
            guard let self, !BridgeOrigin.isPosting(event.notification, from: origin),
                let converted = events[event.name]
            else { return }
            BridgeOrigin.deliverInbound(converted, on: self)
        }
    }

    /// Posts a notification to the bus's ``notificationCenter`` for every dispatch of `type`:
    /// typed publishers reach legacy observers.
    ///
    /// The bridge is a synchronous, unkeyed subscription of `type` like any other: a
    /// ``/EventBus/EventBus/dispatch(_:)`` of `type` reaches it in its place among the subscribers
    /// (after the keyed ones, then in subscription order), and it posts `converter(event)` then, on
    /// the dispatching thread (the bus queue or the main queue when the dispatch came from
    /// ``/EventBus/EventBus/dispatchOnBusQueue(_:)`` or ``/EventBus/EventBus/dispatchOnMain(_:)``).
    /// Legacy observers and the bus's subscribers to that name see the notification once. Events
    /// that came from a notification through ``bridge(notification:object:to:file:line:converter:)`` are not
    /// posted: no echo, no loop.
    ///
    /// The posted notification is exactly `converter(event)`: its `userInfo` has your keys and no
    /// other. (The bus recognises its own posts by the thread that posts them, while it posts.)
    ///
    /// The bridge ends when its token is disposed, its bag is emptied, or the bus is deallocated.
    /// It is a subscription the app made: it counts in `subscriptionCount(of: type)`, is listed
    /// with the line that made it, and a bridge left live fails EventBusTesting's
    /// `requireNoLiveSubscriptions()`. Bridging ``NotificationEvent`` itself is refused
    /// (already disposed token, ``NotificationBridgeIssue/bridgeRefused(type:)``).
    ///
    /// ```swift
    /// struct CartChanged: Event { let count: Int }
    ///
    /// bus.bridge(CartChanged.self) { event in
    ///     Notification(name: .cartDidChange, object: nil, userInfo: ["count": event.count])
    /// }
    /// bus.dispatch(CartChanged(count: 3))   // typed subscribers, and .cartDidChange observers
    /// ```
    @discardableResult
    public func bridge<E: Event>(
        _ type: E.Type,
        file: StaticString = #fileID, line: UInt = #line,
        toNotification converter: @escaping @Sendable (E) -> Notification
    ) -> EventToken {
        guard E.self != NotificationEvent.self else {
            notificationHooks.report(.bridgeRefused(type: E.self))
            return .inert
        }
        let origin = BridgeOrigin(bus: self, eventType: E.self)
        let center = notificationCenter
        let bus = ObjectIdentifier(self)
        // A plain subscription: it sees every dispatch of `E` on this bus, and skips the events
        // that this bus's inbound bridges are delivering (they came from a notification).
        return on(E.self).next(file: file, line: line) { event in
            guard BridgeOrigin.inboundBus != bus else { return }
            origin.post(converter(event), to: center)
        }
    }
}

/// Recognises the notifications a bus posts for a typed event, so that the same bus does not
/// convert them back into that event; and marks the events an inbound bridge delivers, so that
/// outbound bridges do not post them back.
///
/// Both marks are task-locals, set on the posting (or delivering) thread for the duration of a
/// synchronous call: the center calls the bridge's observers synchronously (they are added with no
/// queue), and outbound bridges are synchronous subscriptions. Nothing is added to the user's
/// notification.
struct BridgeOrigin: Hashable, Sendable {
    let bus: ObjectIdentifier
    let eventType: ObjectIdentifier

    init<E: Event>(bus: EventBus, eventType _: E.Type) {
        self.bus = ObjectIdentifier(bus)
        self.eventType = ObjectIdentifier(E.self)
    }

    /// What an outbound bridge is posting on this thread: its origin and the notification's name.
    private struct Posting: Hashable, Sendable {
        let origin: BridgeOrigin
        let name: String
    }

    @TaskLocal private static var posting: Posting?

    /// Posts `notification` to `center`, recognisable by ``isPosting(_:from:)`` while it is posted.
    func post(_ notification: Notification, to center: NotificationCenter) {
        Self.$posting.withValue(Posting(origin: self, name: notification.name.rawValue)) {
            center.post(notification)
        }
    }

    /// Whether `notification` is being posted on this thread by the outbound bridge of `origin`.
    static func isPosting(_ notification: Notification, from origin: BridgeOrigin) -> Bool {
        posting == Posting(origin: origin, name: notification.name.rawValue)
    }

    /// The bus whose inbound bridge is delivering on this thread (outbound bridges are synchronous
    /// subscriptions, so they run inside that delivery, on the same thread).
    @TaskLocal static var inboundBus: ObjectIdentifier?

    /// Delivers an event converted from a notification to `bus`'s subscribers of its type (never to
    /// its hooks: a `NotificationEvent` is not posted again).
    static func deliverInbound<E: Event>(_ event: E, on bus: EventBus) {
        $inboundBus.withValue(ObjectIdentifier(bus)) { bus.deliver(event, key: event.routingKey) }
    }
}
