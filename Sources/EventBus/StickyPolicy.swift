public import Dispatch

/// How ``EventBus/dispatch(_:sticky:)`` keeps an event for subscribers that come later.
///
/// The bus keeps sticky events per event type and key (the event's ``Event/eventType``). A
/// subscriber made with ``SubscriberMaker/replayingSticky()`` receives the kept events of its type
/// and keys (every key, without `ofType`) when it subscribes, in dispatch order, then the live
/// ones, with no duplicate and no gap. Each sticky dispatch applies its policy to its type and key:
/// `.latest` after `.last(5)` keeps just the latest event.
///
/// ```swift
/// let bus = EventBus()
/// bus.dispatch(LoginEvent(userID: "42"), sticky: .latest)
/// bus.on(LoginEvent.self).replayingSticky().next { event in
///     print("current user:", event.userID)   // called at once with "42"
/// }
/// ```
public struct StickyPolicy: Sendable, Equatable, CustomStringConvertible {
    enum Kind: Equatable {
        case latest
        case last(Int)
        case latestWithTTL(UInt64)
        case untilDelivered
    }

    let kind: Kind

    /// Keeps the latest event of the type and key, replacing the one kept before.
    ///
    /// ```swift
    /// EventBus.shared.dispatch(LoginEvent(userID: "42"), sticky: .latest)
    /// ```
    public static let latest = StickyPolicy(kind: .latest)

    /// Keeps the last `count` events of the type and key, oldest first; a `count` below 1 keeps one.
    /// A dispatch costs O(1) however large `count` is (amortised: the bus's room for the key
    /// doubles as events come, up to `count`, so a huge `count` reserves nothing); a dispatch with
    /// a smaller `count` than the events kept lets go of the extra ones, the oldest, at once.
    ///
    /// ```swift
    /// EventBus.shared.dispatch(ChatMessage(room: "7", text: "hi"), sticky: .last(20))
    /// ```
    public static func last(_ count: Int) -> StickyPolicy { StickyPolicy(kind: .last(Swift.max(1, count))) }

    /// Keeps the latest event of the type and key for `ttl`, measured on a monotonic clock (the bus's
    /// ``ManualEventClock`` in tests). An expired event is never replayed or returned; the bus lets it
    /// go when it is next touched or when its incremental sweep gets to it (no timer runs): every
    /// operation lets go of a few expired events at most, so many expiring at once never stall the bus.
    /// `.never` keeps it like ``latest``; a negative interval expires it at once. The bus tracks the
    /// deadlines per type and key, not per dispatch: its memory does not grow with dispatches that
    /// replace the event. Such a dispatch costs O(1) more than ``latest`` when the deadline moves later
    /// (the usual case), O(log n) otherwise, n being the types and keys with an event that has a TTL;
    /// so does letting go of one.
    ///
    /// ```swift
    /// EventBus.shared.dispatch(LoginEvent(userID: "42"), sticky: .latest(ttl: .seconds(30)))
    /// ```
    public static func latest(ttl: DispatchTimeInterval) -> StickyPolicy {
        StickyPolicy(kind: .latestWithTTL(ttl.nanosecondsClamped))
    }

    /// Keeps the event only if nobody received it, until one subscriber takes it: the first
    /// ``SubscriberMaker/replayingSticky()`` subscriber of its type and key (or
    /// ``EventBus/takeSticky(_:ofType:)``) gets it, and it is gone for everyone else.
    ///
    /// "Nobody received it" is decided once the dispatch has delivered it, from what it reached,
    /// as for a dead event: a delivery started or enqueued, to a subscription of the type and key
    /// (monitors included) or of one of its supertypes (see ``DeliveredAsSupertypes``). A
    /// subscription whose owner turns out to be gone, or that ended meanwhile, does not count. A
    /// replaying subscriber that cannot take it after all (its owner is gone) leaves it for the
    /// next taker. Like every sticky dispatch, it replaces what was kept for its type and key: once
    /// received, nothing is kept.
    ///
    /// While a dispatch that found subscribers is delivering it, the event is held back: not
    /// replayed, returned or counted. A replaying subscriber that subscribes in that window (on
    /// another thread) gets it neither live nor replayed, even if nobody received it and it is
    /// kept afterwards; it is then there for the next taker. It is never taken twice.
    ///
    /// ```swift
    /// EventBus.shared.dispatch(LoginEvent(userID: "42"), sticky: .untilDelivered)
    /// ```
    public static let untilDelivered = StickyPolicy(kind: .untilDelivered)

    /// `latest`, `last(n)`, `latest(ttl: …ns)` or `untilDelivered`.
    ///
    /// ```swift
    /// print(StickyPolicy.last(3))   // "last(3)"
    /// ```
    public var description: String {
        switch kind {
        case .latest: "latest"
        case .last(let count): "last(\(count))"
        case .latestWithTTL(let nanoseconds): "latest(ttl: \(nanoseconds)ns)"
        case .untilDelivered: "untilDelivered"
        }
    }
}

extension DispatchTimeInterval {
    /// The interval in nanoseconds, clamped to `0...UInt64.max` (`.never` is the maximum).
    package var nanosecondsClamped: UInt64 {
        func scaled(_ value: Int, by factor: Int) -> UInt64 {
            guard value > 0 else { return 0 }
            let (result, overflow) = value.multipliedReportingOverflow(by: factor)
            return overflow ? UInt64.max : UInt64(result)
        }
        switch self {
        case .seconds(let value): return scaled(value, by: 1_000_000_000)
        case .milliseconds(let value): return scaled(value, by: 1_000_000)
        case .microseconds(let value): return scaled(value, by: 1_000)
        case .nanoseconds(let value): return scaled(value, by: 1)
        case .never: return UInt64.max
        @unknown default: return UInt64.max
        }
    }
}
