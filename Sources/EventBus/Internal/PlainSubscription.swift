/// A subscription whose body is `.immediate(.event)` with no owner: `next { event in … }`, the
/// commonest shape. It holds the handler and nothing else (no body, no owner): its delivery calls
/// the handler with no switch around it (the per-subscriber cost of a dispatch), and building and
/// releasing it retain and release the handler once.
final class PlainSubscription<E: Sendable>: SubscriptionNode, @unchecked Sendable {
    // @unchecked Sendable: as SubscriptionNode; `handler` is immutable.
    private let handler: @Sendable (E) -> Void

    init(
        handler: @escaping @Sendable (E) -> Void, key: String?, traits: SubscriptionTraits, callSite: CallSite,
        container: SubscriptionIndex
    ) {
        self.handler = handler
        super.init(key: key, traits: traits, ownerBelongsToMain: false, callSite: callSite, container: container)
    }

    override func deliver(_ event: UnsafeRawPointer) -> Outcome {
        guard isLive else { return .ended }
        // A dispatch of `E` reaches only the nodes in the bucket of `E` (`TypeIndex.link`).
        Self.withEvent(at: event, as: E.self, handler)
        return .delivered
    }

    override var eventType: Any.Type { E.self }

    override var delivery: SubscriptionInfo.Delivery { .synchronous }
}
