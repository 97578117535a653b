/// A subscription whose body is `.immediate(.event)` with no owner: `next { event in … }`, the
/// commonest shape. It holds the handler and nothing else (no body, no owner): its delivery calls
/// the handler with no switch around it (the per-subscriber cost of a dispatch), and building and
/// releasing it retain and release the handler once.
final class PlainSubscription<E: Sendable>: SubscriptionNode, @unchecked Sendable {
    // @unchecked Sendable: as SubscriptionNode; `handler` is immutable.
    private let handler: @Sendable (E) -> Void

    init(
        handler: @escaping @Sendable (E) -> Void, key: String?, traits: SubscriptionTraits, callSite: CallSite,
        container: BusCore
    ) {
        self.handler = handler
        super.init(key: key, traits: traits, ownerBelongsToMain: false, callSite: callSite, container: container)
    }

    override func deliver(_ event: UnsafeRawPointer) -> Outcome {
        guard isLive else { return .ended }
        // A dispatch of `E` reaches only the nodes in the bucket of `E` (`Registry.link`).
        Self.withEvent(at: event, as: E.self, handler)
        return .delivered
    }

    override func deliver(
        _ event: UnsafeRawPointer, at slot: ChunkSlot, before end: ChunkSlot, _ delivery: inout ChunkDelivery
    ) -> ChunkSlot {
        // A plain handler never stops the dispatch and has no owner: only the deliveries that
        // started are counted, and `isStopped` stays as it is through the run.
        let skipsHandlers = delivery.isStopped
        var reached = 0
        var slot = slot
        repeat {
            reached &+= slot.pointee._withUnsafeGuaranteedRef { node in
                // The first is `self`; the others were checked to be of its class below.
                let node = unsafeDowncast(node, to: Self.self)
                guard node.isLive, !skipsHandlers || node.level.isMonitor else { return 0 }
                Self.withEvent(at: event, as: E.self, node.handler)
                return 1
            }
            slot += 1
        } while slot != end && slot.pointee._withUnsafeGuaranteedRef { type(of: $0) == Self.self }
        delivery.reached &+= reached
        return slot
    }

    override var subscribedType: Any.Type { E.self }

    override var delivery: SubscriptionInfo.Delivery { .synchronous }
}
