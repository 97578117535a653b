/// One dispatch: a value with a phase, which the registry advances a chunk at a time under the
/// lock (``Registry/beginDispatch(_:key:_:ticks:_:)``, ``Registry/advanceDispatch(_:key:subjects:into:)``)
/// and the core's loop delivers outside it (``deliverChunk(_:)``), until its phase is ``Phase/done``.
///
/// The phases, in order (DESIGN §9): the event's handlers by level, keyed then unkeyed (with its
/// monitors too when it has no supertypes); its supertypes' handlers, one supertype after the
/// other; its own monitors; its supertypes' monitors. A handler that stops the dispatch makes the
/// walk skip every handler left, the supertypes' too. Subscriptions made after the dispatch
/// started (higher ids than ``maxID``) are not delivered to.
///
/// A chunk holds the live subscriptions of one walk, on the dispatching thread's stack: up to
/// ``firstChunkCapacity`` in the dispatch's own buffer, then ``chunkCapacity`` at a time in one of
/// its own frame, so that a dispatch to a few subscribers, which handlers dispatching again nest,
/// keeps a small frame on the stack while they run. A chunk's nodes are pinned (a pinned node stays
/// linked, so its list keeps it alive, even if it ends meanwhile) and unpinned by the next advance;
/// a last chunk of at most ``retainedChunkLimit`` nodes is retained instead and released after
/// delivery, so that the lock is taken once. No reference counting per subscriber, and the lock is
/// held O(chunk) at a time however many subscribers there are.
///
/// The dispatch never calls the registry or the core: the registry fills it, the loop delivers it.
struct Dispatch {
    static var chunkCapacity: Int { 64 }
    /// The capacity of the dispatch's own chunk, the first.
    static var firstChunkCapacity: Int { 4 }
    /// The most nodes a last chunk retains rather than pins.
    static var retainedChunkLimit: Int { 2 }

    /// Where a dispatch is. A plain one (no supertypes) is `handlers` until `done`.
    enum Phase: UInt8 {
        /// The event's own subscribers: its handlers by level, then its monitors (only its
        /// handlers if it has supertypes).
        case handlers
        /// The handlers of the supertype ``subject`` (1-based).
        case supertypeHandlers
        /// The event's own monitors, after its supertypes' handlers.
        case monitors
        /// The monitors of the supertype ``subject``.
        case supertypeMonitors
        /// Nothing left to deliver to.
        case done
    }

    // The fields are laid out words first, then the small ones: 64 bytes, in the dispatch's frame
    // on the stack while handlers run (and dispatch again).

    /// The chunk's nodes, pinned or retained, hence unmanaged: `firstChunkCapacity` slots, or
    /// `chunkCapacity` once `isLargeChunk`.
    var chunk: UnsafeMutablePointer<Unmanaged<SubscriptionNode>>
    /// The highest subscription id delivered to: the registry's last id when the dispatch began.
    var maxID = UInt64.max
    /// The bucket being walked. Alive while it may be read: a bucket with a pinned node is not
    /// removed, and a bucket with supertypes never is.
    var bucket: Unmanaged<Bucket>?
    /// The next node to visit, pinned, when a chunk filled before the walk ended.
    var cursor: Unmanaged<SubscriptionNode>?
    /// The `.untilDelivered` event the dispatch holds, if any: every delivery is made holding it
    /// (`SubscriptionNode.deliver(_:holding:)`), so those enqueued finish it when they run.
    // Unmanaged: the dispatch that made the hold holds it until it is over (a reference here would
    // make the value non-trivial, which costs every dispatch).
    var hold: Unmanaged<StickyHold>?
    /// Deliveries started or enqueued so far (a dispatch reaches at most every subscription).
    private(set) var reachedCount: UInt32 = 0
    /// Of which enqueued.
    private(set) var enqueuedCount: UInt32 = 0
    /// The lists of ``bucket`` left to walk, one bit per list: bit `2 * level`, the list of the key
    /// at that level; bit `2 * level + 1`, the unkeyed list. The lowest bit is the list being walked.
    var lists: UInt16 = 0
    /// The chunk's nodes taken.
    var count: UInt8 = 0
    /// Whether the chunk's nodes are retained (the dispatch ended in it) rather than pinned.
    var isRetained = false
    /// Whether the unkeyed subscribers are walked, as well as those of the key.
    let includingUnkeyed: Bool
    /// Set when a handler stopped the dispatch: only monitors are delivered to from then on.
    var isStopped = false
    /// Whether `chunk` is the large one, not the dispatch's own.
    var isLargeChunk = false
    /// Whether the event is delivered as its supertypes too (its own monitors wait for their
    /// handlers).
    var fansOut = false
    var phase = Phase.handlers
    /// Whose subscribers the chunk holds: 0, the event's own; k, its k-th supertype's.
    var subject: UInt8 = 0

    /// The bits of the handlers' lists (the monitors' are above them).
    static let handlerLists: UInt16 = 1 << (2 * DeliveryLevel.firstMonitor.index) - 1

    /// A buffer of nodes on the dispatching thread's stack, pinned or retained.
    typealias Chunk = UnsafeMutableBufferPointer<Unmanaged<SubscriptionNode>>

    /// A dispatch whose first chunk is `chunk`; `request` says which subscribers it walks.
    @inline(__always)
    init(_ request: DispatchRequest, chunk: Chunk) {
        self.includingUnkeyed = request.includingUnkeyed
        // unsafelyUnwrapped: a temporary allocation of a non-zero capacity has a base address.
        self.chunk = chunk.baseAddress.unsafelyUnwrapped
        // After a chain's stop, only the monitors are walked.
        isStopped = request.monitorsOnly
    }

    /// Deliveries started or enqueued so far.
    var reached: Int { Int(reachedCount) }
    /// Of which enqueued.
    var enqueued: Int { Int(enqueuedCount) }

    /// What the dispatch did so far.
    var tally: Tally { Tally(reached: reached, enqueued: enqueued, isStopped: isStopped) }

    /// Whether the walk is in a phase of handlers (not monitors).
    @inline(__always)
    var walksHandlers: Bool { phase == .handlers || phase == .supertypeHandlers }

    // MARK: Delivering a chunk (no lock held)

    /// Delivers the event at `event` (of the chunk's subject's type) to the chunk's subscriptions,
    /// with no lock held, and counts what they did. Returns the mask of the chunk's slots whose
    /// owner turned out to be gone (bit i: slot i), for the loop to reclaim before
    /// ``endChunk()``.
    @inline(__always)
    mutating func deliverChunk(_ event: UnsafeRawPointer) -> UInt64 {
        let (slots, count) = (chunk, Int(count))
        var delivery = ChunkDelivery(first: slots, isStopped: isStopped)
        if let hold {
            Self.deliver(event, to: slots, count: count, holding: hold, &delivery)
        } else if count == 1 {
            // A chunk of one needs no run.
            _ = slots.pointee._withUnsafeGuaranteedRef { $0.deliverAlone(event, at: slots, &delivery) }
        } else {
            var slot = slots
            let end = slots + count
            while slot != end {
                // A node delivers to itself, and a plain one to the nodes of its class after it.
                slot = slot.pointee._withUnsafeGuaranteedRef { $0.deliver(event, at: slot, before: end, &delivery) }
            }
        }
        isStopped = delivery.isStopped
        reachedCount &+= UInt32(truncatingIfNeeded: delivery.reached)
        enqueuedCount &+= UInt32(truncatingIfNeeded: delivery.enqueued)
        return delivery.dead
    }

    /// ``deliverChunk(_:)`` for a dispatch that holds an `.untilDelivered` event: one node at a
    /// time, each told of the hold. Off the plain dispatch path.
    @inline(never)
    private static func deliver(
        _ event: UnsafeRawPointer, to slots: ChunkSlot, count: Int, holding hold: Unmanaged<StickyHold>,
        _ delivery: inout ChunkDelivery
    ) {
        var slot = slots
        let end = slots + count
        while slot != end {
            slot = slot.pointee._withUnsafeGuaranteedRef {
                $0.deliverAlone(event, at: slot, holding: hold.takeUnretainedValue(), &delivery)
            }
        }
    }

    /// After a delivered chunk (and the reclaim of its dead owners): releases it if retained, the
    /// dispatch's last (a node may be deallocated here, with no lock held). A pinned chunk is
    /// unpinned by the next advance.
    @inline(__always)
    mutating func endChunk() {
        guard isRetained else { return }
        for i in 0..<Int(count) { chunk[i].release() }
        count = 0
        isRetained = false
    }

    /// The handles of the subscriptions of the chunk of `count` at `slots` whose bit is set in
    /// `dead`. Lazy: iterated by the reclaim under the lock, it runs no user code.
    static func handles(
        _ dead: UInt64, of slots: UnsafeMutablePointer<Unmanaged<SubscriptionNode>>, count: UInt8
    ) -> some Sequence<SubscriptionHandle> {
        (0..<Int(count)).lazy.filter { dead & (1 << UInt64($0)) != 0 }.map {
            slots[$0].takeUnretainedValue().handle
        }
    }
}
