public import EventBus
public import Foundation

/// Something the NotificationCenter bridge refused or skipped, reported to
/// ``EventBus/EventBus/notificationBridgeIssueHandler``.
///
/// None of these is a crash: the bridge carries on. Without a handler, debug builds print the issue
/// to standard error and release builds stay silent.
///
/// ```swift
/// bus.notificationBridgeIssueHandler = { issue in
///     logger.warning("\(issue)")
/// }
/// ```
public enum NotificationBridgeIssue: Sendable, CustomStringConvertible {
    /// A subscription to ``NotificationEvent`` without a name (no `ofType`) was refused: `next`
    /// returned an already disposed token and the handler will never be called.
    ///
    /// A bus cannot observe every notification of a center; name the notifications you want with
    /// ``EventBus/EventBus/on(notification:object:)`` or `ofType(name.rawValue)`.
    case unnamedSubscriptionRefused

    /// A notification did not convert to a typed event (the converter returned `nil`), so that
    /// event was not delivered. The notification still reached everyone else.
    case conversionFailed(NotificationEvent, type: any Event.Type)

    /// A subscription to a notification name that starts with U+0000 (from any sender) was refused:
    /// such keys are reserved for the bridge's sender-filtered subscriptions, so the name could not
    /// be told apart from one. `next` returned an already disposed token. (Filtered by a sender,
    /// with `object:`, such a name works.)
    case unsupportedName(Notification.Name)

    /// A typed bridge for `type` was refused: ``NotificationEvent`` cannot be bridged to a
    /// notification (it already is one). The returned token is already disposed.
    case bridgeRefused(type: any Event.Type)

    /// A sticky dispatch of a ``NotificationEvent`` (``/EventBus/EventBus/dispatch(_:sticky:)``) was
    /// refused: a notification cannot be kept. It was dispatched as a plain one.
    case stickyRefused

    /// A one-line description, as printed by debug builds without a handler.
    ///
    /// ```swift
    /// bus.notificationBridgeIssueHandler = { print($0.description) }
    /// ```
    public var description: String {
        switch self {
        case .unnamedSubscriptionRefused:
            return
                "a subscription to NotificationEvent without a name was refused (use on(notification:) or ofType(name.rawValue)); its token is disposed"
        case .conversionFailed(let event, let type):
            return "notification \(event.name.rawValue) did not convert to \(type); skipped"
        case .unsupportedName(let name):
            return
                "a subscription to notification name \(name.rawValue.debugDescription) was refused: names starting with U+0000 are reserved; its token is disposed"
        case .stickyRefused:
            return "a NotificationEvent cannot be sticky; it was dispatched without being kept"
        case .bridgeRefused(let type):
            return "\(type) cannot be bridged to a notification; the bridge was refused"
        }
    }
}
