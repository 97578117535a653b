/// One dispatch's walk over the subscribers of an event type and key, decided under the lock a
/// chunk at a time and delivered outside it.
///
/// The route is the list of the event's key, then the unkeyed list. Each `fill` (under the lock)
/// takes up to `chunkCapacity` live subscriptions, retained, into a buffer on the dispatching
/// thread's stack; `run` delivers them with no lock held, then fills the next chunk. So a dispatch
/// to N subscribers holds the lock ⌈N / chunkCapacity⌉ times, each for O(chunkCapacity), and a
/// dispatch to at most `chunkCapacity` subscribers takes it once. Between chunks the node to resume
/// from is pinned: it stays linked even if it ends meanwhile. Subscriptions made after the dispatch
/// started (higher ids) are not delivered to.
struct DispatchPlan<E: Event>: ~Copyable {
    static var chunkCapacity: Int { 32 }

    private let chunk: UnsafeMutableBufferPointer<Subscription<E>>
    private var count = 0
    private let key: String?
    private let includingUnkeyed: Bool
    private var maxID: UInt64 = 0
    private var bucket: Bucket?
    /// 0: the list of `key`; 1: the unkeyed list; 2: done.
    private var stage = 0
    /// The next node to visit, pinned, when a chunk filled before the route ended.
    private var cursor: SubscriptionNode?

    init(key: String?, includingUnkeyed: Bool, chunk: UnsafeMutableBufferPointer<Subscription<E>>) {
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

    /// Under the lock: takes the next chunk of live subscriptions.
    private mutating func fill(index: inout TypeIndex, retired: inout Retired) {
        guard let bucket else { return }
        var node: SubscriptionNode?
        var resumed: SubscriptionNode?
        if let cursor {
            node = cursor
            resumed = cursor
            self.cursor = nil
        } else {
            node = head(of: bucket)
        }
        while stage < 2 {
            guard let current = node, current.id <= maxID else {
                stage += 1
                node = head(of: bucket)
                continue
            }
            if count == chunk.count {
                index.pin(current)
                cursor = current
                break
            }
            if current.isLive {
                // A node in the bucket of `E` is a `Subscription<E>` (`TypeIndex.insert`).
                (chunk.baseAddress! + count).initialize(to: unsafeDowncast(current, to: Subscription<E>.self))
                count += 1
            }
            node = current.next
            if let pinned = resumed {
                resumed = nil
                index.unpin(pinned, in: bucket, retired: &retired)
            }
        }
    }

    /// The first node of the current stage's list, `nil` if that list is skipped or empty.
    private func head(of bucket: Bucket) -> SubscriptionNode? {
        switch stage {
        case 0: key.flatMap { bucket.head(of: $0) }
        case 1: includingUnkeyed ? bucket.head(of: nil) : nil
        default: nil
        }
    }

    /// Delivers `event` chunk by chunk (no lock held while handlers run), reclaiming the
    /// subscriptions whose owner turned out to be gone.
    mutating func run(_ event: E, in container: SubscriptionIndex) {
        while count > 0 {
            var dead: UInt64 = 0  // bit i: chunk[i]'s owner is gone
            for i in 0..<count where chunk[i].deliver(event) == .ownerGone {
                if chunk[i].endSubscription() { dead |= 1 << UInt64(i) }
            }
            if dead != 0 { container.reclaim(DeadNodes(chunk: chunk, count: count, mask: dead)) }
            chunk.baseAddress!.deinitialize(count: count)  // may release nodes: no lock held
            count = 0
            guard cursor != nil else { return }
            container.withIndex { index, retired in fill(index: &index, retired: &retired) }
        }
    }

    deinit {
        if count > 0 { chunk.baseAddress!.deinitialize(count: count) }
    }
}

/// The nodes of a delivered chunk whose owner was found gone.
private struct DeadNodes<E: Event>: Sequence {
    let chunk: UnsafeMutableBufferPointer<Subscription<E>>
    let count: Int
    let mask: UInt64

    func makeIterator() -> some IteratorProtocol<SubscriptionNode> {
        (0..<count).lazy.filter { mask & (1 << UInt64($0)) != 0 }.map { chunk[$0] as SubscriptionNode }.makeIterator()
    }
}
