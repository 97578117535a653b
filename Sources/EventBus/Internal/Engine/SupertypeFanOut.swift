/// What the registry keeps, in the bucket of an event type that is ``DeliveredAsSupertypes``, to
/// deliver it as its supertypes without knowing the type.
protocol SupertypeDelivering: AnyObject, Sendable {
    /// Delivers the event at `event` (of the bucket's type) to its supertypes' subscribers, with no
    /// lock held, continuing `delivery` (what the exact type's subscribers did).
    func deliver(_ event: UnsafeRawPointer, _ delivery: inout SupertypeDelivery)
}

/// The supertypes of `E`, read once (outside the lock: `E.supertypes` is user code) and kept.
final class SupertypeFanOut<E: DeliveredAsSupertypes>: SupertypeDelivering {
    private let supertypes = Locked<[Supertype<E>]?>(nil)

    func deliver(_ event: UnsafeRawPointer, _ delivery: inout SupertypeDelivery) {
        let event = event.assumingMemoryBound(to: E.self).pointee
        for supertype in list() { supertype.deliver(event, &delivery) }
    }

    private func list() -> [Supertype<E>] {
        if let list = supertypes.withLock({ $0 }) { return list }
        let list = E.supertypes
        return supertypes.withLock { kept in
            if kept == nil { kept = list }
            return kept!
        }
    }
}

/// One dispatch's delivery to supertypes: the event's key, whether a handler stopped it, how many
/// deliveries it started so far, and the supertypes' monitors, delivered to after every handler.
struct SupertypeDelivery {
    let core: BusCore
    let key: String?
    /// The id the exact type's walk started with: subscriptions made during the dispatch, to any
    /// type, are not delivered to.
    let upTo: UInt64
    /// The `.untilDelivered` event the dispatch holds, if any: every walk delivers holding it.
    // Unmanaged: as `DispatchPlan.hold` (this delivery is one of the dispatch's walks).
    let hold: Unmanaged<StickyHold>?
    private(set) var isStopped: Bool
    private(set) var reached: Int
    private(set) var enqueued: Int
    /// The monitors walks of the supertypes that have monitors, in declaration order.
    private var monitors: [() -> BusCore.Tally] = []

    /// Continues a dispatch whose exact type's handlers did `tally`.
    // Unmanaged: `hold`, as above.
    init(
        core: BusCore, key: String?, upTo: UInt64, holding hold: Unmanaged<StickyHold>?,
        after tally: BusCore.Tally
    ) {
        self.core = core
        self.key = key
        self.upTo = upTo
        self.hold = hold
        isStopped = tally.isStopped
        reached = tally.reached
        enqueued = tally.enqueued
    }

    /// Whether `S` has live subscriptions on the bus (O(1), one lock acquisition).
    func hasSubscribers<S>(_: S.Type) -> Bool {
        core.count(ofTypeID: ObjectIdentifier(S.self)) > 0
    }

    /// Delivers `value` to the handlers of `S` and the event's key, as a plain dispatch (no hooks,
    /// no supertypes of its own, nothing sticky), and keeps its monitors for
    /// ``deliverToMonitors()``.
    mutating func deliver<S: Sendable>(_ value: S, as _: S.Type) {
        let tally = core.deliverAsSupertype(value, key: key, .handlers(stopped: isStopped, upTo: upTo, holding: hold))
        reached += tally.reached
        enqueued += tally.enqueued
        isStopped = isStopped || tally.isStopped
        guard tally.leftMonitors else { return }
        monitors.append { [core, key, upTo, hold] in
            core.deliverAsSupertype(value, key: key, .monitors(upTo: upTo, holding: hold))
        }
    }

    /// Counts the deliveries of a monitors walk (the exact type's).
    mutating func countMonitorDeliveries(_ tally: BusCore.Tally) {
        reached += tally.reached
        enqueued += tally.enqueued
    }

    /// Delivers to the supertypes' monitors that ``deliver(_:as:)`` kept.
    mutating func deliverToMonitors() {
        for walk in monitors { countMonitorDeliveries(walk()) }
    }
}
