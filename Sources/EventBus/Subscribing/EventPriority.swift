/// The order in which a dispatch calls its subscribers: ``high`` first, then ``normal`` (the
/// default), then ``low``; ``SubscriberMaker/monitor()`` subscribers after all of them.
///
/// Within a priority, the subscribers of the event's key come before the unkeyed ones, each in
/// subscription order. For ``SubscriberMaker/atQueue(_:)`` and main-actor subscribers the priority
/// orders the *enqueueing*: their queue decides when each runs.
///
/// ```swift
/// let bus = EventBus()
/// bus.on(BackTapped.self).priority(.high).handle { _ in .stop }   // runs first, and ends the dispatch
/// bus.on(BackTapped.self).next { _ in print("never called") }
/// bus.dispatch(BackTapped())
/// ```
public enum EventPriority: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Called before the normal and low subscribers.
    ///
    /// ```swift
    /// let token = EventBus.shared.on(BackTapped.self).priority(.high).handle { _ in .continue }
    /// ```
    case high
    /// The default.
    ///
    /// ```swift
    /// let token = EventBus.shared.on(BackTapped.self).priority(.normal).next { _ in print("back") }
    /// ```
    case normal
    /// Called after the high and normal subscribers.
    ///
    /// ```swift
    /// let token = EventBus.shared.on(BackTapped.self).priority(.low).next { _ in print("after the others") }
    /// ```
    case low

    /// 0 for high, 1 for normal, 2 for low: the order of the levels.
    var rank: Int {
        switch self {
        case .high: 0
        case .normal: 1
        case .low: 2
        }
    }

    /// `high`, `normal` or `low`.
    ///
    /// ```swift
    /// print(EventPriority.high)   // "high"
    /// ```
    public var description: String {
        switch self {
        case .high: "high"
        case .normal: "normal"
        case .low: "low"
        }
    }
}
