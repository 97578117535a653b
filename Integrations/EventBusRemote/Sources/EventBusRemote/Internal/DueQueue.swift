import Foundation

/// The scheduled events of an ``InMemoryDurableStore`` by due time: a binary min-heap of
/// (due, order) pairs, `order` being the scheduling order (ties fire in it). O(log n) to add or take
/// the first; an entry whose event was cancelled stays until it comes first, then is skipped.
struct DueQueue: Sendable {
    struct Entry: Sendable {
        let due: Date
        let order: Int
        let id: UUID

        func precedes(_ other: Entry) -> Bool {
            (due, order) < (other.due, other.order)
        }
    }

    private var heap: [Entry] = []

    var first: Entry? { heap.first }

    mutating func add(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func removeFirst() -> Entry? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var least = parent
            if left < heap.count, heap[left].precedes(heap[least]) { least = left }
            if right < heap.count, heap[right].precedes(heap[least]) { least = right }
            if least == parent { break }
            heap.swapAt(parent, least)
            parent = least
        }
        return first
    }
}
