/// A subscription whose body is `.immediate(.event)` with no owner: `next { event in … }`, the
/// commonest shape. Its delivery reads the handler from a field of its own and calls it (the
/// per-subscriber cost of a dispatch): no switch over the body, no owner to load.
final class PlainSubscription<E: Sendable>: Subscription<E>, @unchecked Sendable {
    // @unchecked Sendable: as Subscription; `handler` is immutable.
    private let handler: @Sendable (E) -> Void

    init(
        handler: @escaping @Sendable (E) -> Void, key: String?, body: Body<E>, traits: SubscriptionTraits,
        callSite: CallSite, container: SubscriptionIndex
    ) {
        self.handler = handler
        super.init(key: key, body: body, traits: traits, owner: nil, callSite: callSite, container: container)
    }

    override func deliver(_ event: UnsafeRawPointer) -> Outcome {
        guard isLive else { return .ended }
        // A dispatch of `E` reaches only the nodes in the bucket of `E` (`TypeIndex.link`).
        handler(event.assumingMemoryBound(to: E.self).pointee)
        return .delivered
    }
}
