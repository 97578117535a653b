/// What the index keeps, in the bucket of an event type that is ``DeliveredAsSupertypes``, to
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

/// One dispatch's delivery to supertypes: the event's key, whether a handler stopped it, and how
/// many deliveries it started so far.
struct SupertypeDelivery {
    let index: SubscriptionIndex
    let key: String?
    private(set) var isStopped: Bool
    private(set) var reached: Int

    /// Whether `S` has live subscriptions on the bus (O(1), one lock acquisition).
    func hasSubscribers<S>(_: S.Type) -> Bool {
        index.count(ofTypeID: ObjectIdentifier(S.self)) > 0
    }

    /// Delivers `value` to the subscribers of `S` and the event's key, as a plain dispatch (no
    /// hooks, no supertypes of its own, nothing sticky).
    mutating func deliver<S: Sendable>(_ value: S, as _: S.Type) {
        let tally = index.dispatch(value, key: key, on: nil, stopped: isStopped)
        reached += tally.reached
        isStopped = isStopped || tally.isStopped
    }
}
