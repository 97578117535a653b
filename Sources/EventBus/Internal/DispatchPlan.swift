/// One dispatch's walk over the subscribers of an event type and key, decided under the lock a
/// chunk at a time and delivered outside it.
///
/// The route, for each ``DeliveryLevel`` in order (handlers high, normal, low, then monitors): the
/// list of the event's key, then the unkeyed list; levels with no node are skipped by the bucket's
/// mask. Each `fill` (under the lock) takes up to `chunkCapacity` live subscriptions into a buffer
/// on the dispatching thread's stack. If the route ends within the chunk and it holds at most
/// `retainedChunkLimit` nodes, they are retained and released after delivery: the lock is taken
/// once. Otherwise they are pinned (a pinned node stays linked, so its list keeps it
/// alive, even if it ends meanwhile) and unpinned under the lock when the next chunk is filled: no
/// reference counting per subscriber, and the lock is held O(chunkCapacity) at a time however many
/// subscribers there are. Subscriptions made after the dispatch started (higher ids) are not
/// delivered to. A handler that stops the dispatch makes the walk skip to the monitors.
struct DispatchPlan {
    static var chunkCapacity: Int { 32 }
    /// The most nodes a last chunk retains rather than pins.
    private static var retainedChunkLimit: Int { 2 }

    /// The chunk's nodes, pinned or retained (see above), hence unmanaged.
    private let chunk: UnsafeMutableBufferPointer<Unmanaged<SubscriptionNode>>
    private var count = 0
    /// Whether the chunk's nodes are retained (the route ended in it) rather than pinned.
    private var isRetained = false
    private let includingUnkeyed: Bool
    private(set) var maxID: UInt64 = 0
    /// The walked bucket. Alive while the plan runs: a bucket with a pinned node is not removed,
    /// and the plan keeps a node pinned until its last fill.
    private var bucket: Unmanaged<Bucket>?
    /// `2 * level`: the list of `key` at that level; `2 * level + 1`: the unkeyed list; `stageEnd`:
    /// done.
    private var stage = 0
    /// Where the walk ends: after the monitors, or (a handlers-only walk) before them.
    private var stageEnd = Self.allStages
    private static let allStages = 2 * DeliveryLevel.count
    private static let firstMonitorStage = 2 * DeliveryLevel.firstMonitor.index
    /// Set when a handler stopped the dispatch: only monitors are delivered to from then on.
    private(set) var isStopped = false
    /// Deliveries started or enqueued so far.
    private(set) var reached = 0
    /// Of which enqueued.
    private(set) var enqueued = 0
    /// The bucket's levels with nodes when the walk started (a node linked later has a higher id
    /// than the walk delivers to).
    private var levels: UInt8 = 0
    /// The next node to visit, pinned, when a chunk filled before the route ended.
    private var cursor: Unmanaged<SubscriptionNode>?

    // Unmanaged: the chunk's nodes are pinned or retained (see the type's comment).
    init(includingUnkeyed: Bool, chunk: UnsafeMutableBufferPointer<Unmanaged<SubscriptionNode>>) {
        self.includingUnkeyed = includingUnkeyed
        self.chunk = chunk
    }

    /// Before `start`: limits the walk to the handlers or the monitors (see
    /// ``SubscriptionIndex/Walk``).
    mutating func limit(to walk: SubscriptionIndex.Walk) {
        switch walk {
        case .all: break
        case .handlers(let stopped, let upTo):
            stageEnd = Self.firstMonitorStage
            isStopped = stopped
            self.upTo = upTo
        case .monitors(let upTo):
            isStopped = true
            self.upTo = upTo
        }
    }

    /// The id the dispatch's first walk started with, for the walks after it (subscriptions are
    /// numbered in order, so this is never above the `lastID` of a later start).
    private var upTo = UInt64.max

    /// Under the lock: starts the walk over `bucket`'s subscribers of `key` (and the unkeyed ones,
    /// unless the plan was made without), delivering to subscriptions up to `lastID` (or the limit
    /// ``limit(to:)`` set). Every later call gets the same `key`.
    mutating func start(
        in bucket: Bucket, key: String?, lastID: UInt64, index: inout TypeIndex, retired: inout Retired
    ) {
        self.bucket = Unmanaged.passUnretained(bucket)  // Unmanaged: see `bucket`
        maxID = Swift.min(upTo, lastID)
        levels = bucket.levelMask
        stage = firstStage(atOrAfter: isStopped ? Self.firstMonitorStage : 0)
        fill(key: key, index: &index, retired: &retired)
    }

    /// Whether the first fill found a subscription to deliver to (under the lock, after `start`).
    var foundSubscribers: Bool { count > 0 }

    /// Whether a handlers-only walk ended before monitors (the bucket had some when it started).
    var leftMonitors: Bool {
        stageEnd != Self.allStages && Int(levels) >> DeliveryLevel.firstMonitor.index != 0
    }

    /// The first stage from `stage` on whose level has nodes (`stageEnd` if none).
    @inline(__always)
    private func firstStage(atOrAfter stage: Int) -> Int {
        // The levels from `stage`'s on that have nodes; the lowest is where the walk goes on.
        let remaining = Int(levels) >> (stage >> 1)
        guard remaining != 0 else { return stageEnd }
        let skipped = remaining.trailingZeroBitCount
        return skipped == 0 ? stage : Swift.min(2 * ((stage >> 1) + skipped), stageEnd)
    }

    /// Under the lock: unpins the delivered chunk, then takes the next chunk of live subscriptions.
    private mutating func fill(key: String?, index: inout TypeIndex, retired: inout Retired) {
        guard let bucket else { return }
        // Unmanaged: see `bucket`.
        bucket._withUnsafeGuaranteedRef { fill(from: $0, key: key, index: &index, retired: &retired) }
    }

    @inline(__always)
    private mutating func fill(from bucket: Bucket, key: String?, index: inout TypeIndex, retired: inout Retired) {
        if !isRetained {
            for i in 0..<count { index.unpin(chunk[i], in: bucket, retired: &retired) }
        }
        // The walk holds no references: under the lock, linked nodes are kept alive by their list
        // (`Unmanaged`, so that reading a link costs no reference counting).
        var node: Unmanaged<SubscriptionNode>?  // Unmanaged: under the lock, kept alive by its list
        var resumed: Unmanaged<SubscriptionNode>?  // Unmanaged: pinned
        if isStopped && stage < Self.firstMonitorStage {
            // Stopped: the handlers left are skipped, the monitors' walk starts.
            if let cursor { index.unpin(cursor, in: bucket, retired: &retired) }
            cursor = nil
            stage = firstStage(atOrAfter: Self.firstMonitorStage)
        }
        if let cursor {
            node = cursor
            resumed = cursor
            self.cursor = nil
        } else {
            node = head(of: bucket, key: key, at: stage)
        }
        // The walk's state in locals: a store into the chunk could alias the plan's fields, which
        // would be reloaded on every step otherwise.
        var stage = self.stage
        var count = 0
        let stageEnd = self.stageEnd
        let maxID = self.maxID
        let capacity = chunk.count
        while stage < stageEnd {
            guard let current = node else {
                stage = firstStage(atOrAfter: stage + 1)
                node = head(of: bucket, key: key, at: stage)
                continue
            }
            let (id, isLive, next) = current._withUnsafeGuaranteedRef { ($0.id, $0.isLive, $0.next) }
            guard id <= maxID else {
                node = nil
                continue
            }
            if count == capacity {
                index.pin(current)
                cursor = current
                break
            }
            if isLive {
                // Pinned now; a last chunk of a few is retained instead, below.
                index.pin(current)
                chunk[count] = current
                count += 1
            }
            node = next
            if let pinned = resumed {
                resumed = nil
                index.unpin(pinned, in: bucket, retired: &retired)
            }
        }
        self.stage = stage
        self.count = count
        // A last chunk of a few nodes is retained, so that no lock is needed after it; the others
        // stay pinned (for more than a few, a pin and an unpin under a lock taken once more cost
        // less than a retain and a release each). A live node was not marked to be unlinked when
        // unpinned (only an ended one is), so dropping its pin here needs no check.
        isRetained = cursor == nil && count <= Self.retainedChunkLimit
        if isRetained {
            for i in 0..<count { index.dropPin(retaining: chunk[i]) }
        }
    }

    /// The first node of the list of `stage`, `nil` if that list is skipped or empty.
    @inline(__always)
    // Unmanaged: read under the lock, while the list holds the node (see `SubscriberList`).
    private func head(of bucket: Bucket, key: String?, at stage: Int) -> Unmanaged<SubscriptionNode>? {
        guard stage < stageEnd else { return nil }
        let level = DeliveryLevel(rawValue: UInt8(stage >> 1))
        if stage & 1 == 0 {
            guard let key else { return nil }
            return bucket.unmanagedHead(of: key, at: level)
        }
        return includingUnkeyed ? bucket.unmanagedHead(of: nil, at: level) : nil
    }

    /// Delivers the event at `event` (of the walked type) chunk by chunk, no lock held while
    /// handlers run, reclaiming the subscriptions whose owner turned out to be gone.
    mutating func run(_ event: UnsafeRawPointer, key: String?, in container: SubscriptionIndex) {
        while count > 0 {
            var dead: UInt64 = 0  // bit i: chunk[i]'s owner is gone
            for i in 0..<count where !deliver(event, to: chunk[i]) {
                dead |= 1 << UInt64(i)
            }
            if dead != 0 { reclaim(dead, in: container) }
            if isRetained {
                // The last chunk: release it (a node may be deallocated here, with no lock held).
                for i in 0..<count { chunk[i].release() }
                count = 0
                return
            }
            refill(key: key, in: container)
        }
    }

    /// Delivers the event to `node` (skipped if it is not a monitor and the dispatch was stopped)
    /// and counts the outcome; `false` if the node's owner is gone.
    // Unmanaged: the chunk's nodes are pinned or retained.
    private mutating func deliver(_ event: UnsafeRawPointer, to node: Unmanaged<SubscriptionNode>) -> Bool {
        let outcome = node._withUnsafeGuaranteedRef { node in
            // After a stop, only monitors (the chunk holds them last, in level order).
            isStopped && !node.level.isMonitor ? .ended : node.deliver(event)
        }
        switch outcome {
        case .delivered: reached += 1
        case .enqueued:
            reached += 1
            enqueued += 1
        case .stopped:
            reached += 1
            isStopped = true
        case .ownerGone: return false
        case .ended: break
        }
        return true
    }

    /// Unpins the delivered chunk (a node that ended meanwhile is unlinked now) and takes the next.
    @inline(never)
    private mutating func refill(key: String?, in container: SubscriptionIndex) {
        container.withIndex { index, retired in fill(key: key, index: &index, retired: &retired) }
    }

    /// Has `container` reclaim the chunk's subscriptions whose bit is set in `mask` (owner gone).
    private func reclaim(_ mask: UInt64, in container: SubscriptionIndex) {
        let chunk = chunk
        container.reclaim(
            (0..<count).lazy.filter { mask & (1 << UInt64($0)) != 0 }.map { chunk[$0].takeUnretainedValue().handle })
    }
}
