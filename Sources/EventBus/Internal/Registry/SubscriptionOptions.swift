public import Dispatch

/// Everything a maker chain chose, carried from maker to maker and read once by `register`: the
/// one options type behind every ``SubscriberMaker`` (a new option is written here once).
@usableFromInline
struct SubscriptionOptions {
    @inlinable init() {}

    /// The `ofType` keys, in the order given (duplicates are removed at registration).
    @usableFromInline var keys = SubscriptionKeys()
    /// The `atQueue` queue; `nil` for synchronous or main-actor delivery.
    @usableFromInline var queue: DispatchQueue?
    /// The `buffering` bound of a delivery that leaves the dispatching thread.
    @usableFromInline var buffering = EventBuffering.unbounded
    /// The rest: plain values, passed on to the registry and the node without reference counting.
    @usableFromInline var traits = SubscriptionTraits()
}

/// The options a subscription's node records: plain values (a copy retains nothing), unlike the
/// keys and the queue, which registration hands over separately (the queue inside the body).
@usableFromInline
struct SubscriptionTraits {
    @inlinable init() {}

    /// Whether `freeWith` bound an owner (even one that is gone by now). The owner itself is held
    /// weakly by the maker, and passed on strongly while registering: a weak field here would make
    /// every copy of the options a runtime call.
    @usableFromInline var isOwned = false
    @usableFromInline var priority: EventPriority = .normal
    /// Set by `monitor()`: runs after every handler, cannot stop, sees stopped events.
    @usableFromInline var isMonitor = false
    /// Set by `replayingSticky()`.
    @usableFromInline var replaysSticky = false
    /// The `freeWith` owner's type, for introspection.
    @usableFromInline var ownerType: Any.Type?
    /// Set by `markedInternal()`: the subscription belongs to the library or an integration, not
    /// to the app (excluded from the counts and listed as internal).
    @usableFromInline var isInternal = false

    /// The node's place in a dispatch: handlers by priority, then monitors by priority.
    var level: DeliveryLevel { DeliveryLevel(priority: priority, isMonitor: isMonitor) }
}

/// Where a subscription runs within one dispatch: 0–2 handlers (high, normal, low), 3–5 monitors
/// (high, normal, low). A dispatch walks the levels in order.
struct DeliveryLevel: Hashable, Comparable {
    static let count = 6
    /// The first monitor level: a stop skips the levels below it.
    static let firstMonitor = DeliveryLevel(rawValue: 3)
    static let normal = DeliveryLevel(priority: .normal, isMonitor: false)

    let rawValue: UInt8

    init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    init(priority: EventPriority, isMonitor: Bool) {
        rawValue = UInt8(priority.rank) + (isMonitor ? 3 : 0)
    }

    var index: Int { Int(rawValue) }
    @usableFromInline var isMonitor: Bool { self >= Self.firstMonitor }
    @usableFromInline var priority: EventPriority { EventPriority.allCases[Int(rawValue % 3)] }

    static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
