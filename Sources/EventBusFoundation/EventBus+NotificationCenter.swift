public import EventBus
public import Foundation

extension EventBus {
    /// Creates an independent bus whose NotificationCenter bridge uses `notificationCenter`.
    ///
    /// ``/EventBus/EventBus/shared`` bridges with `NotificationCenter.default`; a bus made with
    /// ``/EventBus/EventBus/init()`` bridges with a private center of its own, so that two buses
    /// never reach each other's subscribers. Give a bus the center its legacy observers and posters
    /// use (often `.default`, for a bus other than the shared one), or a test's own center.
    /// Subscriptions end when the bus is deallocated, and its observers are then removed from the
    /// center.
    ///
    /// ```swift
    /// let center = NotificationCenter()
    /// let bus = EventBus(notificationCenter: center)
    /// ```
    public convenience init(notificationCenter: NotificationCenter) {
        self.init(extensionConfiguration: NotificationBridgeConfiguration(center: notificationCenter))
    }

    /// The center this bus bridges notifications with: the one given to
    /// ``init(notificationCenter:)``; `NotificationCenter.default` for ``/EventBus/EventBus/shared``;
    /// otherwise a private center made for this bus (the same one for the bus's whole life).
    ///
    /// ```swift
    /// bus.notificationCenter.post(name: .userDidLogIn, object: nil)   // reaches bus subscribers too
    /// ```
    public var notificationCenter: NotificationCenter { notificationHooks.center }

    /// Called when the NotificationCenter bridge refuses a subscription or skips a notification
    /// that does not convert; see ``NotificationBridgeIssue``.
    ///
    /// Runs on the thread where the issue happened (the subscribing or posting thread), never under
    /// the bus's lock. `nil` (the default): debug builds print the issue to standard error, release
    /// builds stay silent. Settable at any time, from any thread.
    ///
    /// ```swift
    /// bus.notificationBridgeIssueHandler = { issue in
    ///     if case .conversionFailed = issue { metrics.increment("notifications.skipped") }
    ///     logger.warning("\(issue)")
    /// }
    /// ```
    public var notificationBridgeIssueHandler: (@Sendable (NotificationBridgeIssue) -> Void)? {
        get { notificationHooks.issueHandler.withLock { $0 } }
        set {
            // Swap under the lock, release the old handler (and what it captured) after unlocking.
            var replaced = newValue
            notificationHooks.issueHandler.withLock { swap(&$0, &replaced) }
            _ = replaced
        }
    }

    /// Starts a subscription to the notifications named `name`, optionally only those posted by
    /// `object`, through the bus's ``notificationCenter``.
    ///
    /// The same as `on(NotificationEvent.self).ofType(name.rawValue)` (for a sender, a key that
    /// also names it). Chain it like any maker; ``EventBus/SubscriberMaker/ofType(_:object:)`` adds
    /// more names. While at least one subscription to a name lives, the bus has exactly one observer
    /// for that name on its center, whatever the number of subscriptions and senders; the observer is
    /// removed when the last of them ends (disposed, owner gone, bag emptied, bus deallocated).
    ///
    /// Handlers run on the posting thread (NotificationCenter calls observers synchronously), on the
    /// ``/EventBus/SubscriberMaker/atQueue(_:)`` queue, or on the main actor after
    /// ``/EventBus/SubscriberMaker/onMainActor()``. `object` is matched by identity and not retained:
    /// like NotificationCenter, keep it alive while subscribed.
    ///
    /// ```swift
    /// let token = bus.on(notification: .playerDidStop, object: player)
    ///     .atQueue(.main)
    ///     .next { event in print("stopped", event.userInfo ?? [:]) }
    /// token.dispose()   // last subscription to .playerDidStop: the observer leaves the center
    /// ```
    public func on(
        notification name: Notification.Name, object: AnyObject? = nil
    ) -> SubscriberMaker<NotificationEvent, Never, EventDelivery.Synchronous> {
        on(NotificationEvent.self).ofType(name, object: object)
    }

    /// Posts `notification` to the bus's ``notificationCenter``.
    ///
    /// Legacy observers of the center see it, and the bus's subscribers to its name receive it
    /// exactly once, through the bridge's observer (so on the posting thread, before `post`
    /// returns, on their queue, or on the main actor). Nothing is posted back: no echo, no loop. The
    /// same as `dispatch(NotificationEvent(notification))`.
    ///
    /// It is not an overload of ``/EventBus/EventBus/dispatch(_:)``, so that dispatching a value
    /// that is not an ``/EventBus/Event`` (`bus.dispatch("hello")`) is reported as "requires that
    /// 'String' conform to 'Event'", not as a failed conversion to `Notification`.
    ///
    /// ```swift
    /// bus.post(Notification(name: .userDidLogIn, object: nil, userInfo: ["id": "42"]))
    /// ```
    public func post(_ notification: Notification) {
        dispatch(NotificationEvent(notification))
    }

    /// The bridge's hooks on this bus, which every bus has from its creation.
    var notificationHooks: NotificationHooks {
        guard let hooks = hooks(of: NotificationEvent.self) as? NotificationHooks else {
            preconditionFailure("EventBus: a bus without its NotificationCenter bridge hooks")
        }
        return hooks
    }
}

extension SubscriberMaker where E == NotificationEvent {
    /// Also receives the notifications named `name` (only those posted by `object`, if given).
    ///
    /// Chain it to subscribe to several names with one token, in any position of the chain; see
    /// ``EventBus/EventBus/on(notification:object:)``.
    ///
    /// ```swift
    /// let names = bus.on(notification: .userDidLogIn).ofType(.userDidLogOut).next { event in print(event.name) }
    /// let onMain = bus.on(notification: .userDidLogIn).onMainActor().ofType(.userDidLogOut).next { event in print(event.name) }
    /// ```
    public func ofType(_ name: Notification.Name, object: AnyObject? = nil) -> Self {
        ofType(object.map { SenderKey.key(name: name, sender: $0) } ?? SenderKey.key(name: name))
    }
}

extension EventSubscribing {
    /// Starts a subscription to the notifications named `name` (optionally only from `object`) on
    /// `bus` (the shared bus by default), bound to `self`.
    ///
    /// Equivalent to `bus.on(notification: name, object: object).freeWith(self)`: it ends when
    /// `self` is deallocated, and with it the bus's observer for `name` if it was the last
    /// subscription to that name. Handlers run on the posting thread unless you chain
    /// ``/EventBus/SubscriberMaker/atQueue(_:)`` or ``/EventBus/SubscriberMaker/onMainActor()``; a
    /// `@MainActor` owner such as a view controller needs `onMainActor()` to touch its state.
    ///
    /// ```swift
    /// final class ProfileScreen: UIViewController {   // every NSObject is EventSubscribing
    ///     override func viewDidLoad() {
    ///         super.viewDidLoad()
    ///         subscribeNotification(.userDidLogIn).onMainActor().next { owner, event in owner.reload() }
    ///     }
    ///     func reload() {}
    /// }
    /// ```
    public func subscribeNotification(
        _ name: Notification.Name, object: AnyObject? = nil, on bus: EventBus = .shared
    ) -> SubscriberMaker<NotificationEvent, Self, EventDelivery.Synchronous> {
        bus.on(notification: name, object: object).freeWith(self)
    }
}

/// Every `NSObject` subclass gets ``/EventBus/EventSubscribing``'s `subscribe(_:on:)` and
/// ``EventBus/EventSubscribing/subscribeNotification(_:object:on:)``, bound to its lifetime.
///
/// Handlers run on the dispatching (or posting) thread unless you chain
/// ``/EventBus/SubscriberMaker/atQueue(_:)`` or ``/EventBus/SubscriberMaker/onMainActor()``; a
/// view controller is `@MainActor`, so its handlers use `onMainActor()`.
///
/// ```swift
/// final class InboxViewController: UIViewController {
///     private var messages: [ChatMessage] = []
///     override func viewDidLoad() {
///         super.viewDidLoad()
///         subscribe(ChatMessage.self).onMainActor().next { owner, message in owner.append(message) }
///     }
///     func append(_ message: ChatMessage) { messages.append(message) }
/// }
/// ```
extension NSObject: EventSubscribing {}
