/// One dispatch's walk over the subscribers of an event type and key, decided under the lock a
/// chunk at a time and delivered outside it.
///
/// The route, for each ``DeliveryLevel`` in order (handlers high, normal, low, then monitors): the
/// list of the event's key, then the unkeyed list; levels with no node are skipped (the bucket
/// keeps a mask of them; with a single node linked, `start` takes it without a walk). Each `fill`
/// (under the lock) takes live subscriptions into a buffer on the dispatching thread's stack: up to
/// `firstChunkCapacity` into the dispatch's own, then, if the route goes on, up to `chunkCapacity`
/// at a time into one in a frame of its own (`runInLargeChunk`), so that a dispatch to a few
/// subscribers, which handlers dispatching again nest, keeps a small frame on the stack while
/// they run. If the route ends within the chunk and it holds at most
/// `retainedChunkLimit` nodes, they are retained and released after delivery: the lock is taken
/// once. Otherwise they are pinned (a pinned node stays linked, so its list keeps it alive, even if
/// it ends meanwhile) and unpinned under the lock when the next chunk is filled: no reference
/// counting per subscriber, and the lock is held O(chunkCapacity) at a time however many
/// subscribers there are. Subscriptions made after the dispatch started (higher ids) are not
/// delivered to. A handler that stops the dispatch makes the walk skip to the monitors. `run`
/// delivers a chunk with one virtual call per node, or per run of plain nodes of
/// one class (see `SubscriptionNode.deliver(_:at:before:_:)`).
struct DispatchPlan {
    static var chunkCapacity: Int { 32 }
    /// The capacity of the dispatch's own chunk, the first: a route of more subscribers goes on in
    /// chunks of `chunkCapacity` (one lock more than if the first were as large).
    static var firstChunkCapacity: Int { 4 }
    /// The most nodes a last chunk retains rather than pins.
    private static var retainedChunkLimit: Int { 2 }

    // The fields are declared in the order they are laid out (words, then the small ones): 64
    // bytes, on the stack in the dispatch's frame while handlers run (and dispatch again).

    /// The chunk's nodes, pinned or retained (see above), hence unmanaged: `firstChunkCapacity`
    /// slots, or `chunkCapacity` once `isLargeChunk`.
    private var chunk: UnsafeMutablePointer<Unmanaged<SubscriptionNode>>
    /// The highest id delivered to: the dispatch's first walk's `lastID` (or the bound
    /// ``limit(to:)`` set, until `start`).
    private(set) var maxID = UInt64.max
    /// The walked bucket, read by each `fill`. Alive while it may be read: a bucket with a pinned
    /// node is not removed, and the plan keeps a node pinned until its last fill (a retained last
    /// chunk ends the plan: no fill follows it).
    private var bucket: Unmanaged<Bucket>?
    /// The next node to visit, pinned, when a chunk filled before the route ended.
    private var cursor: Unmanaged<SubscriptionNode>?
    /// The `.untilDelivered` event the dispatch holds, if any: every delivery is made holding it
    /// (`SubscriptionNode.deliver(_:holding:)`), so those enqueued finish it when they run.
    // Unmanaged: the dispatch that made the hold holds it until its last walk is over (a reference
    // here would make the plan non-trivial, which costs every dispatch).
    var hold: Unmanaged<StickyHold>?
    /// Deliveries started or enqueued so far (32 bits: a dispatch reaches at most every
    /// subscription, and 2^32 of them would take more than 700 GB).
    private var reachedCount: UInt32 = 0
    /// Of which enqueued.
    private var enqueuedCount: UInt32 = 0
    /// The lists left to walk, one bit per list: bit `2 * level`, the list of `key` at that level;
    /// bit `2 * level + 1`, the unkeyed list. The lowest bit is the list being walked. Set by
    /// `start` from the bucket's levels with nodes (a node linked later has a higher id than the
    /// walk delivers to), and the limits; a list's bit is cleared when the walk leaves it.
    private var lists: UInt16 = 0
    /// The chunk's nodes taken (at most `chunkCapacity`).
    private var count: UInt8 = 0
    /// Whether the chunk's nodes are retained (the route ended in it) rather than pinned.
    private var isRetained = false
    let includingUnkeyed: Bool
    /// Set when a handler stopped the dispatch: only monitors are delivered to from then on.
    private(set) var isStopped = false
    /// Whether the walk is limited to the handlers (see ``limit(to:)``).
    private var isHandlersOnly = false
    /// Whether a handlers-only walk ended before monitors (the bucket had some when it started).
    private(set) var leftMonitors = false
    /// Whether `chunk` is the large one (``runInLargeChunk(_:key:in:)``'s), not the dispatch's own.
    private var isLargeChunk = false
    /// The bits of the handlers' lists (the monitors' are above them).
    private static let handlerLists: UInt16 = 1 << (2 * DeliveryLevel.firstMonitor.index) - 1

    /// Deliveries started or enqueued so far.
    var reached: Int { Int(reachedCount) }
    /// Of which enqueued.
    var enqueued: Int { Int(enqueuedCount) }

    // Unmanaged: the chunk's nodes are pinned or retained (see the type's comment).
    @inline(__always)
    init(includingUnkeyed: Bool, chunk: UnsafeMutableBufferPointer<Unmanaged<SubscriptionNode>>) {
        self.includingUnkeyed = includingUnkeyed
        self.chunk = chunk.baseAddress.unsafelyUnwrapped
    }

    /// Before `start`: limits the walk to the handlers or the monitors (see
    /// ``BusCore/Walk``).
    mutating func limit(to walk: BusCore.Walk) {
        switch walk {
        case .all: break
        case .handlers(let stopped, let upTo, let hold):
            isHandlersOnly = true
            isStopped = stopped
            maxID = upTo
            self.hold = hold
        case .monitors(let upTo, let hold):
            isStopped = true
            maxID = upTo
            self.hold = hold
        }
    }

    /// Under the lock: starts the walk over `bucket`'s subscribers of `key` (and the unkeyed ones,
    /// unless the plan was made without), delivering to subscriptions up to `lastID` (or the limit
    /// ``limit(to:)`` set). Every later call gets the same `key`.
    @inline(__always)
    mutating func start(
        in bucket: Bucket, key: String?, lastID: UInt64, registry: inout Registry
    ) {
        self.bucket = Unmanaged.passUnretained(bucket)  // Unmanaged: see `bucket`
        maxID = Swift.min(maxID, lastID)
        let levels = bucket.levelBits
        lists = (key == nil ? 0 : levels) | (includingUnkeyed ? levels << 1 : 0)
        if isHandlersOnly {
            leftMonitors = levels & ~Self.handlerLists != 0
            lists &= Self.handlerLists
        }
        if isStopped { lists &= ~Self.handlerLists }
        if bucket.linkedCount == 1 {
            takeSoleNode(of: bucket, key: key, level: levels)
        } else {
            next(key: key, into: nil, registry: &registry)
        }
    }

    /// `start`'s shortcut when `bucket` has a single node linked, at the level whose bit `level`
    /// has: the route is that node, if the walk takes its list, so there is no list to walk and
    /// nothing to pin; it is retained as a last chunk of one (the lock is taken once).
    @inline(__always)
    private mutating func takeSoleNode(of bucket: Bucket, key: String?, level: UInt16) {
        let deliveryLevel = DeliveryLevel(rawValue: UInt8(truncatingIfNeeded: level.trailingZeroBitCount >> 1))
        // Unmanaged: under the lock, a linked node is kept alive by its list (see `fill`).
        var sole: Unmanaged<SubscriptionNode>?
        if lists & (level << 1) != 0 { sole = bucket.unmanagedHead(of: nil, at: deliveryLevel) }
        // The key's list is in `lists` only when there is a key.
        if sole == nil && lists & level != 0 { sole = bucket.unmanagedHead(of: key, at: deliveryLevel) }
        lists = 0
        // As the walk takes a node: live, and subscribed before the dispatch started.
        guard let sole, sole._withUnsafeGuaranteedRef({ $0.isLive && $0.id <= maxID }) else { return }
        _ = sole.retain()
        chunk[0] = sole
        count = 1
        isRetained = true
    }

    /// Whether `start` found a subscription to deliver to (under the lock, after `start`).
    var foundSubscribers: Bool { count > 0 }

    /// A buffer of nodes on the dispatching thread's stack, pinned or retained (see above).
    typealias Chunk = UnsafeMutableBufferPointer<Unmanaged<SubscriptionNode>>

    /// Under the lock (``Registry/continueDispatch(_:key:into:)``): unpins the delivered chunk,
    /// then takes the next chunk of live subscriptions, into `large` if given.
    mutating func next(key: String?, into large: Chunk?, registry: inout Registry) {
        guard let bucket else { return }
        // Unmanaged: see `bucket`.
        bucket._withUnsafeGuaranteedRef {
            unpinChunk(in: $0, registry: &registry)
            if let large {
                chunk = large.baseAddress.unsafelyUnwrapped
                isLargeChunk = true
            }
            fill(from: $0, key: key, registry: &registry)
        }
    }

    /// Under the lock: unpins the delivered chunk (unless it was retained).
    @inline(__always)
    private mutating func unpinChunk(in bucket: Bucket, registry: inout Registry) {
        if !isRetained {
            for i in 0..<Int(count) { registry.unpin(chunk[i], in: bucket) }
        }
    }

    @inline(__always)
    private mutating func fill(from bucket: Bucket, key: String?, registry: inout Registry) {
        // The walk's state in locals: a store into the chunk could alias the plan's fields, which
        // would be reloaded on every step otherwise.
        let slots = chunk
        let capacity = isLargeChunk ? Self.chunkCapacity : Self.firstChunkCapacity
        let maxID = self.maxID
        var lists = self.lists
        var count = 0
        // The walk holds no references: under the lock, linked nodes are kept alive by their list
        // (`Unmanaged`, so that reading a link costs no reference counting).
        var node: Unmanaged<SubscriptionNode>?  // Unmanaged: under the lock, kept alive by its list
        if isStopped && lists & Self.handlerLists != 0 {
            // Stopped: the handlers left are skipped, the monitors' walk starts.
            if let cursor { registry.unpin(cursor, in: bucket) }
            cursor = nil
            lists &= ~Self.handlerLists
            node = head(of: bucket, key: key, lists: lists)
        } else if let resumed = cursor {
            // Resumed where the last chunk filled: the cursor (pinned, so still linked; its id was
            // checked) is taken if live, then let go of once its successor is read.
            cursor = nil
            let (isLive, next) = resumed._withUnsafeGuaranteedRef { ($0.isLive, $0.next) }
            if isLive {
                registry.pin(resumed)
                slots[count] = resumed
                count &+= 1
            }
            node = next
            registry.unpin(resumed, in: bucket)
        } else {
            node = head(of: bucket, key: key, lists: lists)
        }
        walk: while lists != 0 {
            while let current = node {
                let (id, isLive, next) = current._withUnsafeGuaranteedRef { ($0.id, $0.isLive, $0.next) }
                // The rest of the list subscribed after the dispatch started.
                guard id <= maxID else { break }
                if count == capacity {
                    registry.pin(current)
                    cursor = current
                    break walk
                }
                if isLive {
                    // Pinned now; a last chunk of a few is retained instead, below.
                    registry.pin(current)
                    slots[count] = current
                    count &+= 1
                }
                node = next
            }
            lists &= lists &- 1
            node = head(of: bucket, key: key, lists: lists)
        }
        self.lists = lists
        self.count = UInt8(truncatingIfNeeded: count)
        // A last chunk of a few nodes is retained, so that no lock is needed after it; the others
        // stay pinned (for more than a few, a pin and an unpin under a lock taken once more cost
        // less than a retain and a release each). A live node was not marked to be unlinked when
        // unpinned (only an ended one is), so dropping its pin here needs no check.
        isRetained = cursor == nil && count <= Self.retainedChunkLimit
        if isRetained {
            for i in 0..<count { registry.dropPin(retaining: slots[i]) }
        }
    }

    /// The first node of the lowest list in `lists` (see ``lists``), `nil` if it is empty or
    /// `lists` is.
    @inline(__always)
    // Unmanaged: read under the lock, while the list holds the node (see `SubscriberList`).
    private func head(of bucket: Bucket, key: String?, lists: UInt16) -> Unmanaged<SubscriptionNode>? {
        guard lists != 0 else { return nil }
        let list = lists.trailingZeroBitCount
        let level = DeliveryLevel(rawValue: UInt8(truncatingIfNeeded: list >> 1))
        // A keyed list's bit is only set when there is a key.
        return bucket.unmanagedHead(of: list & 1 == 0 ? key : nil, at: level)
    }

    /// Delivers the event at `event` (of the walked type) chunk by chunk, no lock held while
    /// handlers run, reclaiming the subscriptions whose owner turned out to be gone.
    mutating func run(_ event: UnsafeRawPointer, key: String?, in container: BusCore) {
        if let hold {
            runHolding(hold, event, key: key, in: container)
            return
        }
        runChunks(event, key: key, in: container) { slots, count, delivery in
            var slot = slots
            let end = slots + count
            if count == 1 {
                // A chunk of one needs no run.
                _ = slot.pointee._withUnsafeGuaranteedRef { $0.deliverAlone(event, at: slot, &delivery) }
            } else {
                while slot != end {
                    // A node delivers to itself, and a plain one to the nodes of its class after it.
                    slot = slot.pointee._withUnsafeGuaranteedRef {
                        $0.deliver(event, at: slot, before: end, &delivery)
                    }
                }
            }
        }
    }

    /// ``run(_:key:in:)`` holding an `.untilDelivered` event: one node at a time, each told of the
    /// hold. Not inlined: it is off the plain dispatch path.
    @inline(never)
    // Unmanaged: see `hold`.
    private mutating func runHolding(
        _ hold: Unmanaged<StickyHold>, _ event: UnsafeRawPointer, key: String?, in container: BusCore
    ) {
        runChunks(event, key: key, in: container) { slots, count, delivery in
            var slot = slots
            let end = slots + count
            while slot != end {
                slot = slot.pointee._withUnsafeGuaranteedRef {
                    $0.deliverAlone(event, at: slot, holding: hold.takeUnretainedValue(), &delivery)
                }
            }
        }
    }

    /// The chunk loop of ``run(_:key:in:)``: `deliver` delivers the chunk's slots (the first, and
    /// how many) and counts in its delivery; the outcome is taken into the plan, then the next
    /// chunk filled, until the route ends (past the dispatch's own small chunk, in
    /// ``runInLargeChunk(_:key:in:)``, which delivers the event at `event` as `run` does).
    @inline(__always)
    private mutating func runChunks(
        _ event: UnsafeRawPointer, key: String?, in container: BusCore,
        _ deliver: (ChunkSlot, Int, inout ChunkDelivery) -> Void
    ) {
        while count > 0 {
            let (slots, count) = (chunk, Int(count))
            var delivery = ChunkDelivery(first: slots, isStopped: isStopped)
            deliver(slots, count, &delivery)
            isStopped = delivery.isStopped
            reachedCount &+= UInt32(truncatingIfNeeded: delivery.reached)
            enqueuedCount &+= UInt32(truncatingIfNeeded: delivery.enqueued)
            if delivery.dead != 0 { Self.reclaim(delivery.dead, of: slots, count: count, in: container) }
            if isRetained {
                // The last chunk: release it (a node may be deallocated here, with no lock held).
                for i in 0..<count { slots[i].release() }
                self.count = 0
                return
            }
            if cursor != nil && !isLargeChunk {
                runInLargeChunk(event, key: key, in: container)
                return
            }
            refill(key: key, in: container)
        }
    }

    /// `run`'s continuation when the route goes on past the dispatch's own (small) chunk: in a
    /// frame of its own, the rest is walked in chunks of `chunkCapacity`.
    @inline(never)
    private mutating func runInLargeChunk(_ event: UnsafeRawPointer, key: String?, in container: BusCore) {
        withUnsafeTemporaryAllocation(of: Unmanaged<SubscriptionNode>.self, capacity: Self.chunkCapacity) { large in
            container.withRegistry { registry in registry.continueDispatch(&self, key: key, into: large) }
            run(event, key: key, in: container)
        }
    }

    /// Unpins the delivered chunk (a node that ended meanwhile is unlinked now) and takes the next.
    @inline(never)
    private mutating func refill(key: String?, in container: BusCore) {
        container.withRegistry { registry in registry.continueDispatch(&self, key: key) }
    }

    /// Has `container` reclaim the subscriptions of the chunk of `count` at `slots` whose bit is set
    /// in `mask` (owner gone). Not inlined, and static (a method would copy the plan): `run`'s
    /// frame, on the stack while handlers run (and dispatch again), stays small.
    @inline(never)
    private static func reclaim(_ mask: UInt64, of slots: ChunkSlot, count: Int, in container: BusCore) {
        container.reclaim(
            (0..<count).lazy.filter { mask & (1 << UInt64($0)) != 0 }.map { slots[$0].takeUnretainedValue().handle })
    }
}
