/// What a sticky dispatch needs besides the event: how to keep it, and (for `.untilDelivered`) the
/// supertypes whose subscribers also count as receiving it.
struct StickyDispatch {
    let policy: StickyPolicy
    /// The supertypes the event type is delivered as, if the policy keeps the event only when
    /// nobody receives it; empty otherwise.
    let supertypeIDs: [ObjectIdentifier]

    /// Reads `E.supertypes` if needed: user code, so never under the lock.
    init<E: Event>(_ policy: StickyPolicy, for _: E.Type) {
        self.policy = policy
        guard case .untilDelivered = policy.kind, let type = E.self as? any DeliveredAsSupertypes.Type else {
            supertypeIDs = []
            return
        }
        supertypeIDs = Self.ids(of: type)
    }

    private static func ids<T: DeliveredAsSupertypes>(of _: T.Type) -> [ObjectIdentifier] {
        T.supertypes.map(\.typeID)
    }
}
