/// What a subscription is, for debugging and tests: its event type and keys, where and in which
/// order its handler runs, its owner, and the line that made it. A value: a snapshot taken when you
/// asked.
///
/// Get them from ``EventBus/subscriptions``, ``EventBus/subscriptions(of:)`` and
/// ``EventToken/info``. The `description` is one line, made to be printed:
///
/// ```swift
/// let bus = EventBus()
/// let token = bus.on(LoginEvent.self).ofType("42").next { _ in }
/// print(token.info!)
/// // #1 LoginEvent ["42"] synchronous, normal, made at MyApp/Session.swift:12
/// for info in bus.subscriptions { print(info) }   // one line per subscription, in subscription order
/// ```
public struct SubscriptionInfo: Sendable, Hashable, CustomStringConvertible {
    /// Where a subscription's handler runs.
    public enum Delivery: Sendable, Hashable, CustomStringConvertible {
        /// On the dispatching thread, before `dispatch` returns.
        case synchronous
        /// On the ``SubscriberMaker/atQueue(_:)`` queue with this label.
        case queue(label: String)
        /// On the main actor (``SubscriberMaker/onMainActor()``).
        case mainActor
        /// On the owner, an actor of this type (``SubscriberMaker/isolated(to:)``), as
        /// `String(reflecting:)` spells it.
        case actor(typeName: String)
        /// Into an ``EventStream``, whose consumer takes the events.
        case stream

        /// `synchronous`, `queue "label"`, `main actor`, `actor MyApp.Counter` or `stream`.
        ///
        /// ```swift
        /// print(SubscriptionInfo.Delivery.queue(label: "work"))   // queue "work"
        /// ```
        public var description: String {
            switch self {
            case .synchronous: "synchronous"
            case .queue(let label): "queue \"\(label)\""
            case .mainActor: "main actor"
            case .actor(let typeName): "actor \(typeName)"
            case .stream: "stream"
            }
        }
    }

    /// The token's ``EventToken/id``.
    public let id: UInt64
    /// The event type, as `String(reflecting:)` spells it (`MyApp.LoginEvent`).
    public let typeName: String
    /// The ``SubscriberMaker/ofType(_:)`` keys, in the order given; empty for every key.
    public let keys: [String]
    /// Where the handler runs.
    public let delivery: Delivery
    /// The ``SubscriberMaker/priority(_:)``.
    public let priority: EventPriority
    /// Whether it is a ``SubscriberMaker/monitor()``.
    public let isMonitor: Bool
    /// The ``SubscriberMaker/freeWith(_:)`` owner's type, `nil` without one.
    public let ownerType: String?
    /// Whether the owner is still alive; `nil` without an owner, and for the owner of a main-actor
    /// or `atQueue(.main)` subscription read off the main queue (loading it there could release
    /// it off the main thread).
    public let isOwnerAlive: Bool?
    /// `#fileID:#line` of the `next` or `handle` call that made it: `MyApp/Session.swift:12`.
    public let callSite: String
    /// Whether it belongs to the library or an integration (the test kit's recorders, say) rather
    /// than to the app. Internal subscriptions are left out of ``EventBus/subscriptionCount``. A
    /// NotificationCenter bridge is the app's: not internal.
    public let isInternal: Bool
    /// The bound of a subscription whose deliveries leave the dispatching thread
    /// (``SubscriberMaker/buffering(_:)``); `nil` for a synchronous one.
    public let buffering: EventBuffering?
    /// Deliveries waiting for it now (always 0 for a synchronous one).
    public let pendingCount: Int
    /// Deliveries its bound dropped since it was made (see ``EventBuffering``).
    public let droppedCount: Int

    /// One line: id, event type, keys, delivery, priority, owner, bound and counts (when bounded or
    /// not empty), call site.
    ///
    /// ```swift
    /// // #7 MyApp.LoginEvent ["42"] main actor, high monitor, owner MyApp.ProfileScreen (alive), made at MyApp/Profile.swift:30
    /// ```
    public var description: String {
        var line = "#\(id) \(typeName)"
        if !keys.isEmpty { line += " \(keys)" }
        line += " \(delivery), \(priority)\(isMonitor ? " monitor" : "")"
        if let ownerType {
            let state = isOwnerAlive.map { $0 ? "alive" : "gone" } ?? "not checked off the main queue"
            line += ", owner \(ownerType) (\(state))"
        }
        if let buffering, buffering != .unbounded || pendingCount > 0 || droppedCount > 0 {
            line += ", \(buffering), \(pendingCount) pending, \(droppedCount) dropped"
        }
        line += ", made at \(callSite)"
        if isInternal { line += " [internal]" }
        return line
    }
}
