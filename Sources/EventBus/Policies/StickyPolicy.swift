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
    /// "Received" is decided when a handler runs for it, for every mode: a subscription of the
    /// type and key (monitors included) or of one of its supertypes (see
    /// ``DeliveredAsSupertypes``), synchronous, queued (``SubscriberMaker/atQueue(_:)``) or
    /// main-actor, live or replayed. An enqueued delivery counts when it runs on its queue, not
    /// when it is enqueued: one whose subscription was disposed, or whose owner is gone, by then
    /// does not count, and a taker that cannot take it after all (disposed, or its owner gone,
    /// before its queue ran) leaves it for the next taker. An event stream
    /// (``EventBus/events(of:ofType:buffering:file:line:)``) receives it when it is yielded
    /// into the stream's buffer, on the dispatching thread, whether its consumer takes it out later
    /// or not. Like every sticky dispatch, it replaces what was kept for its type and key: once
    /// received, nothing is kept.
    ///
    /// A live dispatch delivers it to all its subscribers, as any dispatch does (the dispatch is
    /// its one taker); a replay delivers it to the one subscriber that took it. While a delivery
    /// that may receive it is under way, the event is held back: not replayed, returned or
    /// counted. That is while its dispatch, if it found subscribers, delivers it and until the
    /// deliveries it enqueued have run, or until the enqueued replay that took it has run. A
    /// replaying subscriber that subscribes in that window (on another thread) gets it neither live
    /// nor replayed, even if nobody received it and it is kept afterwards; it is then there for the
    /// next taker. It is never taken twice.
    ///
    /// Cost: a dispatch that finds subscribers allocates one small object for the hold and takes
    /// the bus lock once more after delivering (O(k), k the events kept for the key: one unless
    /// `.last(n)` came after it); each delivery it (or a replay) enqueues takes the lock once more
    /// when it runs, O(k) too.
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
