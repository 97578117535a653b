/// The sticky events that have a time-to-live, soonest expiry first (a binary min-heap): the
/// index's sweep lets go of expired ones a few per operation, with no timer.
///
/// An entry may be stale (its event was replaced or removed since): the store ignores those.
/// Push and pop are O(log n). Only touched under the bus lock.
struct ExpiryQueue {
    struct Item {
        let expiry: UInt64
        let typeID: ObjectIdentifier
        let key: String?
        let sequence: UInt64
    }

    private var heap: [Item] = []

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    mutating func push(_ item: Item) {
        heap.append(item)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].expiry < heap[parent].expiry else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the soonest item if it has expired at `now`.
    mutating func popExpired(now: UInt64) -> Item? {
        guard let first = heap.first, now >= first.expiry else { return nil }
        let last = heap.removeLast()
        guard !heap.isEmpty else { return first }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].expiry < heap[smallest].expiry { smallest = left }
            if right < heap.count && heap[right].expiry < heap[smallest].expiry { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }

    mutating func removeAll() { heap = [] }
}
