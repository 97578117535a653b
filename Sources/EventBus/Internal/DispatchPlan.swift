/// One dispatch's walk over the subscribers of an event type and key, decided under the lock a
/// chunk at a time and delivered outside it.
///
/// The route is the list of the event's key, then the unkeyed list. Each `fill` (under the lock)
/// takes up to `chunkCapacity` live subscriptions into a buffer on the dispatching thread's stack
/// and pins them (a pinned node stays linked, so its list keeps it alive, even if it ends
/// meanwhile); `run` delivers them with no lock held, then, under the lock again, unpins them and
/// fills the next chunk. So a dispatch to N ≥ 1 subscribers takes the lock ⌈N / chunkCapacity⌉ + 1
/// times, each for O(chunkCapacity), with no reference counting per subscriber. Subscriptions made
/// after the dispatch started (higher ids) are not delivered to.
struct DispatchPlan {
    static var chunkCapacity: Int { 32 }

    /// The chunk's nodes, pinned (so alive: see above), hence unmanaged.
    private let chunk: UnsafeMutableBufferPointer<Unmanaged<SubscriptionNode>>
    private var count = 0
    private let key: String?
    private let includingUnkeyed: Bool
    private var maxID: UInt64 = 0
    private var bucket: Bucket?
    /// 0: the list of `key`; 1: the unkeyed list; 2: done.
    private var stage = 0
    /// The next node to visit, pinned, when a chunk filled before the route ended.
    private var cursor: Unmanaged<SubscriptionNode>?

    init(key: String?, includingUnkeyed: Bool, chunk: UnsafeMutableBufferPointer<Unmanaged<SubscriptionNode>>) {
        self.key = key
        self.includingUnkeyed = includingUnkeyed
        self.chunk = chunk
    }

    /// Under the lock: starts the walk over `bucket`.
    mutating func start(in bucket: Bucket, lastID: UInt64, index: inout TypeIndex, retired: inout Retired) {
        self.bucket = bucket
        maxID = lastID
        fill(index: &index, retired: &retired)
    }

    /// Under the lock: unpins the delivered chunk, then takes the next chunk of live subscriptions.
    private mutating func fill(index: inout TypeIndex, retired: inout Retired) {
        guard let bucket else { return }
        for i in 0..<count { index.unpin(chunk[i], in: bucket, retired: &retired) }
        count = 0
        // The walk holds no references: under the lock, linked nodes are kept alive by their list
        // (`Unmanaged`, so that reading a link costs no reference counting).
        var node: Unmanaged<SubscriptionNode>?
        var resumed: Unmanaged<SubscriptionNode>?
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
    }

    /// The first node of the current stage's list, `nil` if that list is skipped or empty.
    private func head(of bucket: Bucket) -> Unmanaged<SubscriptionNode>? {
        let head: SubscriptionNode? =
            switch stage {
            case 0: key.flatMap { bucket.head(of: $0) }
            case 1: includingUnkeyed ? bucket.head(of: nil) : nil
            default: nil
            }
        return head.map { Unmanaged.passUnretained($0) }
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
            // Unpins this chunk (a node that ended meanwhile is unlinked now) and takes the next.
            container.withIndex { index, retired in fill(index: &index, retired: &retired) }
        }
    }

    /// Has `container` reclaim the chunk's subscriptions whose bit is set in `mask` (owner gone).
    private func reclaim(_ mask: UInt64, in container: SubscriptionIndex) {
        let chunk = chunk
        container.reclaim((0..<count).lazy.filter { mask & (1 << UInt64($0)) != 0 }.map { chunk[$0].takeUnretainedValue().id })
    }
}
