/// How many deliveries a subscription that runs off the dispatching thread keeps waiting, and what
/// happens above that: the one spelling for ``SubscriberMaker/atQueue(_:)``,
/// ``SubscriberMaker/onMainActor()`` (dispatched off the main thread),
/// ``SubscriberMaker/isolated(to:)`` and ``EventBus/events(of:ofType:buffering:file:line:)``.
///
/// Set it with ``SubscriberMaker/buffering(_:)``. Every event a bounded subscription drops is
/// counted: in ``SubscriptionInfo/droppedCount``, in ``EventBus/droppedDeliveryCount``, and as a
/// ``TraceRecord/dropped(_:)`` record for the tracer. A dropped `.untilDelivered` sticky event
/// stays kept for the next taker.
///
/// - ``unbounded`` (the default) keeps everything, in order: a consumer that falls behind receives
///   every event later, and the backlog is held in memory meanwhile.
/// - ``bufferingNewest(_:)`` keeps the newest *n*: the oldest waiting delivery is dropped to make
///   room (a UI that wants only the latest state).
/// - ``bufferingOldest(_:)`` keeps the first *n*: a new event is dropped while *n* wait.
/// - ``backPressure(highWatermark:limit:)``: ``EventBus/send(_:)`` waits, before delivering to
///   anyone, while more than *highWatermark* deliveries wait here; a synchronous
///   ``EventBus/dispatch(_:)`` never waits for a consumer: it enqueues up to *limit* and drops above.
///
/// ```swift
/// // A server's slow consumer: producers that `await bus.send(_:)` slow down to its pace.
/// let writer = DispatchQueue(label: "audit-writer")
/// bus.on(LoginEvent.self).atQueue(writer)
///     .buffering(.backPressure(highWatermark: 1_000, limit: 10_000))
///     .next { login in print("audit", login.userID) }
/// ```
public struct EventBuffering: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Hashable {
        case unbounded
        case newest(Int)
        case oldest(Int)
        case backPressure(highWatermark: Int, limit: Int)
    }

    let kind: Kind

    /// Keeps every delivery: nothing is dropped, and the backlog is held in memory. The default.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).atQueue(.global()).buffering(.unbounded).next { _ in }
    /// ```
    public static let unbounded = EventBuffering(kind: .unbounded)

    /// Keeps the newest `limit` deliveries: when `limit` wait, the oldest is dropped to make room
    /// for the new one. A negative `limit` counts as 0 (every event is dropped, and counted).
    ///
    /// ```swift
    /// @MainActor final class StatusBar {
    ///     var text = ""
    ///     init(bus: EventBus) {
    ///         // Only the latest status matters: older ones are dropped while the main thread is busy.
    ///         bus.on(LoginEvent.self).onMainActor().freeWith(self).buffering(.bufferingNewest(1))
    ///             .next { bar, login in bar.text = "Signed in as \(login.userID)" }
    ///     }
    /// }
    /// ```
    public static func bufferingNewest(_ limit: Int) -> EventBuffering {
        EventBuffering(kind: .newest(max(0, limit)))
    }

    /// Keeps the first `limit` deliveries: while `limit` wait, a new event is dropped. A negative
    /// `limit` counts as 0.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).atQueue(.global()).buffering(.bufferingOldest(100)).next { _ in }
    /// ```
    public static func bufferingOldest(_ limit: Int) -> EventBuffering {
        EventBuffering(kind: .oldest(max(0, limit)))
    }

    /// Back-pressure: ``EventBus/send(_:)`` waits before delivering while more than
    /// `highWatermark` deliveries wait for this subscription; ``EventBus/dispatch(_:)``, which never
    /// waits, enqueues up to `limit` and drops (and counts) above it. With *k* senders passing the
    /// check at once, at most `highWatermark` + *k* wait (never more than `limit`). A negative
    /// `highWatermark` counts as 0; a `limit` below `highWatermark` counts as `highWatermark`.
    ///
    /// ```swift
    /// let writer = DispatchQueue(label: "writer")
    /// bus.on(LoginEvent.self).atQueue(writer)
    ///     .buffering(.backPressure(highWatermark: 100, limit: 1_000))
    ///     .next { _ in }
    /// ```
    public static func backPressure(highWatermark: Int, limit: Int) -> EventBuffering {
        let high = max(0, highWatermark)
        return EventBuffering(kind: .backPressure(highWatermark: high, limit: max(high, limit)))
    }

    /// The most deliveries kept waiting; `nil` when unbounded.
    ///
    /// ```swift
    /// print(EventBuffering.bufferingNewest(5).limit ?? 0)   // prints: 5
    /// ```
    public var limit: Int? {
        switch kind {
        case .unbounded: nil
        case .newest(let limit), .oldest(let limit), .backPressure(_, let limit): limit
        }
    }

    /// `unbounded`, `newest 5`, `oldest 5` or `back-pressure 100/1000`.
    ///
    /// ```swift
    /// print(EventBuffering.backPressure(highWatermark: 100, limit: 1_000))   // prints: back-pressure 100/1000
    /// ```
    public var description: String {
        switch kind {
        case .unbounded: "unbounded"
        case .newest(let limit): "newest \(limit)"
        case .oldest(let limit): "oldest \(limit)"
        case .backPressure(let high, let limit): "back-pressure \(high)/\(limit)"
        }
    }
}
