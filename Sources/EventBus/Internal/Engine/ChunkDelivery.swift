/// A place in a dispatch's chunk: the subscriptions a ``Dispatch`` delivers to outside the
/// lock, pinned or retained, hence unmanaged.
// Unmanaged: the chunk's nodes are pinned or retained (see `Dispatch`).
typealias ChunkSlot = UnsafeMutablePointer<Unmanaged<SubscriptionNode>>

/// What the deliveries to one chunk of a ``Dispatch`` did, counted as they run (in a local of
/// the delivering loop, not in the plan: the handlers' calls would make its fields be reloaded and
/// stored around each of them).
struct ChunkDelivery {
    /// The chunk's first slot.
    let first: ChunkSlot
    /// Set when a handler stopped the dispatch: only monitors are delivered to from then on.
    var isStopped: Bool
    /// Deliveries started or enqueued.
    var reached = 0
    /// Of which enqueued.
    var enqueued = 0
    /// Bit i: the owner of the subscription at `first + i` is gone.
    var dead: UInt64 = 0

    init(first: ChunkSlot, isStopped: Bool) {
        self.first = first
        self.isStopped = isStopped
    }

    /// Counts the outcome of the delivery to the subscription at `slot`: the common case
    /// (`delivered`) with no branch (see ``Outcome``).
    @inline(__always)
    mutating func count(_ outcome: Outcome, at slot: ChunkSlot) {
        reached &+= outcome.reached
        guard outcome.bits > 1 else { return }
        switch outcome {
        case .enqueued: enqueued &+= 1
        case .stopped: isStopped = true
        case .ownerGone: dead |= 1 << UInt64(slot - first)
        default: break
        }
    }
}
