public import EventBus
public import Foundation

/// A `Notification` travelling on an ``/EventBus/EventBus``: the event type of the NotificationCenter
/// bridge.
///
/// Its ``eventType`` is the notification's name, so a subscription picks names with
/// ``EventBus/EventBus/on(notification:object:)`` (or
/// `on(NotificationEvent.self).ofType(name.rawValue)`). Every subscription to `NotificationEvent` has
/// at least one name; one without is refused (see
/// ``NotificationBridgeIssue/unnamedSubscriptionRefused``).
///
/// `Notification` itself cannot be an ``/EventBus/Event``: Foundation marks it not `Sendable` (its
/// `object` and `userInfo` are `Any`), on Apple platforms and in swift-corelibs-foundation alike. The
/// bus carries it in this wrapper instead; ``notification`` gives it back unchanged.
///
/// ```swift
/// let token = bus.on(notification: .userDidLogIn).next { event in
///     print(event.name, event.userInfo ?? [:])
/// }
/// bus.post(Notification(name: .userDidLogIn))   // posted to the bus's center
/// ```
///
/// > Important: A notification's `object` and `userInfo` cross threads on the bus exactly as they
/// > do through `NotificationCenter` (whose observers may run on any thread or queue): the poster
/// > vouches for their thread safety. Prefer a typed event (see
/// > ``EventBus/EventBus/bridge(notification:object:to:file:line:converter:)``) that copies what you need.
public struct NotificationEvent: Event, @unchecked Sendable {
    // @unchecked Sendable: an immutable value whose payload is shared between threads under the
    // same contract as NotificationCenter's (documented above); the bus never mutates it.

    /// The notification, unchanged.
    ///
    /// ```swift
    /// let token = bus.on(notification: .userDidLogIn).next { event in legacyHandler(event.notification) }
    /// ```
    public let notification: Notification

    /// Wraps `notification` for the bus.
    ///
    /// ```swift
    /// bus.dispatch(NotificationEvent(notification))   // same as bus.post(notification)
    /// ```
    public init(_ notification: Notification) {
        self.notification = notification
    }

    /// Makes the notification `name` from `object` with `userInfo`, for the bus.
    ///
    /// ```swift
    /// bus.dispatch(NotificationEvent(name: .userDidLogIn, object: session))
    /// ```
    public init(name: Notification.Name, object: Any? = nil, userInfo: [AnyHashable: Any]? = nil) {
        self.notification = Notification(name: name, object: object, userInfo: userInfo)
    }

    /// The notification's name, which is also its ``eventType``.
    ///
    /// ```swift
    /// let token = bus.on(notification: .a).ofType(.b).next { event in print(event.name) }
    /// ```
    public var name: Notification.Name { notification.name }

    /// The object that posted the notification (`Notification.object`).
    ///
    /// ```swift
    /// let token = bus.on(notification: .playerDidStop).next { event in print(event.object ?? "no sender") }
    /// ```
    public var object: Any? { notification.object }

    /// The notification's `userInfo`.
    ///
    /// ```swift
    /// let token = bus.on(notification: .userDidLogIn).next { event in print(event.userInfo?["id"] ?? "") }
    /// ```
    public var userInfo: [AnyHashable: Any]? { notification.userInfo }

    /// The routing key: the notification's name (`name.rawValue`).
    ///
    /// ```swift
    /// bus.on(NotificationEvent.self).ofType(Notification.Name.userDidLogIn.rawValue)   // = on(notification:)
    /// ```
    public var eventType: String? { notification.name.rawValue }
}

extension NotificationEvent: HookedEvent {
    package static func makeHooks(for bus: EventBus) -> any EventTypeHooks {
        NotificationHooks(bus: bus)
    }
}
