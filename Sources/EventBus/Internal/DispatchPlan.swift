/// One dispatch's walk over the subscribers of an event type and key, decided under the lock a
/// chunk at a time and delivered outside it.
///
/// The route is the list of the event's key, then the unkeyed list. Each `fill` (under the lock)
/// takes up to `chunkCapacity` live subscriptions into a buffer on the dispatching thread's stack.
/// If the route ends within the chunk (any dispatch to at most `chunkCapacity` subscribers), the
/// chunk's nodes are retained and released after delivery: the lock is taken once. Otherwise they
/// are pinned (a pinned node stays linked, so its list keeps it alive, even if it ends meanwhile)
/// and unpinned under the lock when the next chunk is filled: no reference counting per
/// subscriber, and the lock is held O(chunkCapacity) at a time however many subscribers there are.
/// Subscriptions made after the dispatch started (higher ids) are not delivered to.
struct DispatchPlan {
    static var chunkCapacity: Int { 32 }

    /// The chunk's nodes, pinned or retained (see above), hence unmanaged.
    private let chunk: UnsafeMutableBufferPointer<Unmanaged<SubscriptionNode>>
    private var count = 0
    /// Whether the chunk's nodes are retained (the route ended in it) rather than pinned.
    private var isRetained = false
    private let key: String?
    private let includingUnkeyed: Bool
    private var maxID: UInt64 = 0
    /// The walked bucket. Alive while the plan runs: a bucket with a pinned node is not removed,
    /// and the plan keeps a node pinned until its last fill.
    private var bucket: Unmanaged<Bucket>?
    /// 0: the list of `key`; 1: the unkeyed list; 2: done.
    private var stage = 0
    /// The next node to visit, pinned, when a chunk filled before the route ended.
    private var cursor: Unmanaged<SubscriptionNode>?

    // Unmanaged: the chunk's nodes are pinned or retained (see the type's comment).
    init(key: String?, includingUnkeyed: Bool, chunk: UnsafeMutableBufferPointer<Unmanaged<SubscriptionNode>>) {
        self.key = key
        self.includingUnkeyed = includingUnkeyed
        self.chunk = chunk
    }

    /// Under the lock: starts the walk over `bucket`.
    mutating func start(in bucket: Bucket, lastID: UInt64, index: inout TypeIndex, retired: inout Retired) {
        self.bucket = Unmanaged.passUnretained(bucket)  // Unmanaged: see `bucket`
        maxID = lastID
        fill(index: &index, retired: &retired)
    }

    /// Under the lock: unpins the delivered chunk, then takes the next chunk of live subscriptions.
    private mutating func fill(index: inout TypeIndex, retired: inout Retired) {
        guard let bucket = bucket?.takeUnretainedValue() else { return }
        if !isRetained {
            for i in 0..<count { index.unpin(chunk[i], in: bucket, retired: &retired) }
        }
        count = 0
        // The walk holds no references: under the lock, linked nodes are kept alive by their list
        // (`Unmanaged`, so that reading a link costs no reference counting).
        var node: Unmanaged<SubscriptionNode>?  // Unmanaged: under the lock, kept alive by its list
        var resumed: Unmanaged<SubscriptionNode>?  // Unmanaged: pinned
        if let cursor {
            node = cursor
            resumed = cursor
            self.cursor = nil
        } else {
            node = head(of: bucket)
        }
        while stage < 2 {
            guard let current = node else {
                stage += 1
                node = head(of: bucket)
                continue
            }
            let (id, isLive, next) = current._withUnsafeGuaranteedRef { ($0.id, $0.isLive, $0.unmanagedNext) }
            guard id <= maxID else {
                node = nil
                continue
            }
            if count == chunk.count {
                index.pin(current)
                cursor = current
                break
            }
            if isLive {
                chunk[count] = current
                count += 1
            }
            node = next
            if let pinned = resumed {
                resumed = nil
                index.unpin(pinned, in: bucket, retired: &retired)
            }
        }
        // The last chunk is retained, so that no lock is needed after it; the others are pinned.
        isRetained = cursor == nil
        for i in 0..<count {
            if isRetained { _ = chunk[i].retain() } else { index.pin(chunk[i]) }
        }
    }

    /// The first node of the current stage's list, `nil` if that list is skipped or empty.
    private func head(of bucket: Bucket) -> Unmanaged<SubscriptionNode>? {
        switch stage {
        case 0: key.flatMap { bucket.unmanagedHead(of: $0) }
        case 1: includingUnkeyed ? bucket.unmanagedHead(of: nil) : nil
        default: nil
        }
    }

    /// Delivers the event at `event` (of the walked type) chunk by chunk, no lock held while
    /// handlers run, reclaiming the subscriptions whose owner turned out to be gone.
    mutating func run(_ event: UnsafeRawPointer, in container: SubscriptionIndex) {
        while count > 0 {
            var dead: UInt64 = 0  // bit i: chunk[i]'s owner is gone
            for i in 0..<count where chunk[i]._withUnsafeGuaranteedRef({ $0.deliver(event) }) == .ownerGone {
                dead |= 1 << UInt64(i)
            }
            if dead != 0 { reclaim(dead, in: container) }
            if isRetained {
                // The last chunk: release it (a node may be deallocated here, with no lock held).
                for i in 0..<count { chunk[i].release() }
                count = 0
                return
            }
            // Unpins this chunk (a node that ended meanwhile is unlinked now) and takes the next.
            container.withIndex { index, retired in fill(index: &index, retired: &retired) }
        }
    }

    /// Has `container` reclaim the chunk's subscriptions whose bit is set in `mask` (owner gone).
    private func reclaim(_ mask: UInt64, in container: SubscriptionIndex) {
        let chunk = chunk
        container.reclaim(
            (0..<count).lazy.filter { mask & (1 << UInt64($0)) != 0 }.map { chunk[$0].takeUnretainedValue().handle })
    }
}
