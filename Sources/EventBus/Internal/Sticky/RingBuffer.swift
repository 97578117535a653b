/// A queue in a ring buffer, oldest first: adding at the back and removing at either end are O(1).
/// Its storage grows as elements come, doubling up to the capacity the caller allows, so a huge
/// allowance reserves nothing: an append that grows it moves the elements (amortised O(1)).
struct RingBuffer<Element>: RandomAccessCollection {
    private var storage = ContiguousArray<Element?>()
    /// Where the first element is in `storage`.
    private var head = 0
    private(set) var count = 0

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Element {
        storage[slot(of: position)]!  // every position below `count` holds one
    }

    /// Appends `element` after the last, growing the storage if it is full: doubling, but to at
    /// most `maxCapacity` elements (and at least one more than `count`). Returns how many elements
    /// it wrote: one, plus those it moved if it grew.
    @discardableResult
    mutating func append(_ element: Element, maxCapacity: Int) -> Int {
        var moved = 0
        if count == storage.count {
            moved = grow(to: Swift.max(count + 1, Swift.min(count * 2, maxCapacity)))
        }
        storage[slot(of: count)] = element
        count += 1
        return moved + 1
    }

    /// Removes and returns the first (oldest) element; it must have one.
    mutating func removeFirst() -> Element {
        let element = storage[head].take()!
        head = head + 1 == storage.count ? 0 : head + 1
        count -= 1
        return element
    }

    /// Removes and returns the last (newest) element; it must have one.
    mutating func removeLast() -> Element {
        count -= 1
        return storage[slot(of: count)].take()!
    }

    /// Changes the first element in place; it must have one.
    mutating func updateFirst(_ body: (inout Element) -> Void) {
        body(&storage[head]!)
    }

    /// Moves the elements, in order, to new storage of `capacity`; returns how many it moved.
    private mutating func grow(to capacity: Int) -> Int {
        var grown = ContiguousArray<Element?>(repeating: nil, count: capacity)
        for position in 0..<count { grown[position] = storage[slot(of: position)].take() }
        storage = grown
        head = 0
        return count
    }

    /// The index in `storage` of `position`.
    @inline(__always)
    private func slot(of position: Int) -> Int {
        let index = head + position
        return index < storage.count ? index : index - storage.count
    }
}
