/// The sticky slots (type and key) whose events include one with a time-to-live, soonest deadline
/// first (an indexed binary min-heap): the registry's sweep lets go of expired ones a few per
/// operation, with no timer.
///
/// A slot has at most one item, which its store keeps while the slot holds an event with a TTL
/// (only `.latest(ttl:)` makes one, replacing the slot, so there is one such event at most) and
/// removes when it stops holding one, whatever let go of the event: so the queue holds one item
/// per such slot, however many dispatches replaced the event. Costs, n being the items: a new item
/// O(log n); a later deadline for an item O(1) (the item keeps its place, see ``Item/queuedAt``,
/// and is moved there when its old deadline comes, O(log n), at most once per deadline a dispatch
/// set); an earlier deadline O(log n); removing an item O(log n).
///
/// A reference type shared by the registry and its sticky stores, touched only under the bus lock.
/// Plain safe Swift (its fields keep their run-time exclusivity checks): the registry reads
/// `isEmpty` only while it keeps sticky events, so a bus without them never touches it.
final class ExpiryQueue {
    /// A slot's place in the queue.
    final class Item {
        let typeID: ObjectIdentifier
        let key: String?
        /// When the slot's event expires, on the bus's sticky clock.
        fileprivate(set) var deadline: UInt64
        /// The deadline the item is ordered by in the heap: `deadline`, or an earlier one that a
        /// later dispatch postponed without moving the item (it moves when this one comes).
        fileprivate var queuedAt: UInt64
        /// The item's index in the heap; `nil` once removed.
        fileprivate var position: Int?

        fileprivate init(typeID: ObjectIdentifier, key: String?, deadline: UInt64) {
            self.typeID = typeID
            self.key = key
            self.deadline = deadline
            queuedAt = deadline
        }
    }

    /// What ``popDue(now:)`` found.
    enum Due {
        /// No item's deadline has come.
        case none
        /// The soonest item's event has expired: the item was removed.
        case expired(Item)
        /// The soonest item's place had come, but its deadline was postponed: it was moved there.
        case postponed
    }

    private var heap: [Item] = []

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    /// Queues a new item for the slot `key` of `typeID`, due at `deadline`. O(log n).
    func schedule(typeID: ObjectIdentifier, key: String?, deadline: UInt64) -> Item {
        let item = Item(typeID: typeID, key: key, deadline: deadline)
        reschedule(item, to: deadline)
        return item
    }

    /// Gives `item` a new deadline: O(1) if it is later (the item keeps its place until then),
    /// O(log n) if earlier, or if the item had left the queue (it is queued again).
    func reschedule(_ item: Item, to deadline: UInt64) {
        item.deadline = deadline
        guard let position = item.position else {
            item.queuedAt = deadline
            item.position = heap.count
            heap.append(item)
            siftUp(heap.count - 1)
            return
        }
        guard deadline < item.queuedAt else { return }
        item.queuedAt = deadline
        siftUp(position)
    }

    /// Removes `item` if it is still queued. O(log n).
    func remove(_ item: Item) {
        guard let position = item.position else { return }
        item.position = nil
        let last = heap.removeLast()
        guard position < heap.count else { return }
        heap[position] = last
        last.position = position
        siftDown(siftUp(position))
    }

    /// One step of the sweep at `now`: removes and returns the soonest item if its event has
    /// expired, or moves it to its postponed deadline. O(log n).
    func popDue(now: UInt64) -> Due {
        guard let first = heap.first, now >= first.queuedAt else { return .none }
        if now < first.deadline {
            first.queuedAt = first.deadline
            siftDown(0)
            return .postponed
        }
        remove(first)
        return .expired(first)
    }

    /// Empties the queue (every slot let go of its events).
    func removeAll() {
        for item in heap { item.position = nil }
        heap = []
    }

    /// Moves the item at `index` up to its place; returns where it ended.
    @discardableResult
    private func siftUp(_ index: Int) -> Int {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].queuedAt < heap[parent].queuedAt else { break }
            swapAt(child, parent)
            child = parent
        }
        return child
    }

    /// Moves the item at `index` down to its place.
    private func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].queuedAt < heap[smallest].queuedAt { smallest = left }
            if right < heap.count && heap[right].queuedAt < heap[smallest].queuedAt { smallest = right }
            guard smallest != parent else { return }
            swapAt(parent, smallest)
            parent = smallest
        }
    }

    private func swapAt(_ i: Int, _ j: Int) {
        heap.swapAt(i, j)
        heap[i].position = i
        heap[j].position = j
    }
}
