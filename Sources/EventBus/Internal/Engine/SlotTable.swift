/// The live subscriptions of a bus by slot: how a token finds its subscription in O(1) without
/// hashing.
///
/// Slots live in pages of `pageSize`, allocated when the table first needs them and never moved,
/// so growing the table adds one page and copies nothing (a flat array would copy every slot each
/// time it doubles: 5 ms under the bus lock at a million subscriptions, measured). Each page
/// threads a list of its free slots. A new subscription takes a free slot of the lowest page that
/// has one (``PageSet``), so that after a peak the high pages empty out; a page whose slots are
/// all free is freed, but one such page is kept (so that subscribing and disposing in turn at a
/// page's edge does not free and allocate it each time). Touched only under the bus lock.
///
/// A slot refers to its subscription's primary node without retaining it: the node is in the table
/// only while it is linked in its list, which owns it (`Registry.link` links it before
/// `set`, `Registry.end` frees the slot before unlinking, `removeAll` drops the table with the
/// lists). So setting and freeing a slot costs no reference counting.
struct SlotTable {
    static let pageSize = 1024
    static let noSlot = UInt32.max

    private let pages = SlotPages()
    /// The pages with a free slot (allocated or not).
    private var withRoom = PageSet()
    /// The lowest page in `withRoom` (there is always one: a page is added when the last fills).
    private var lowest = 0
    /// The empty page kept allocated, or -1.
    private var spare = -1

    init() {
        addPage()
    }

    /// A slot for a new subscription: a free one of the lowest page that has one. O(1), and
    /// O(log₆₄ pages) when it fills that page; allocating a page is O(`pageSize`).
    @inline(__always)
    mutating func reserve() -> UInt32 {
        let page = pages.state(lowest)
        if page.pointee.entries == nil { pages.allocate(lowest) }
        let slot = page.pointee.freeHead
        // unsafelyUnwrapped: the page was allocated on the line above if it had no entries.
        page.pointee.freeHead = page.pointee.entries.unsafelyUnwrapped[Int(slot % UInt32(Self.pageSize))].nextFree
        page.pointee.freeCount -= 1
        if page.pointee.freeCount == UInt32(Self.pageSize) - 1 || page.pointee.freeCount == 0 { tookFirstOrLast() }
        return slot
    }

    /// `reserve` took the first slot of an empty page (which is no longer the spare) or the last
    /// free slot of one (which leaves the set of pages with room).
    private mutating func tookFirstOrLast() {
        if lowest == spare { spare = -1 }
        guard pages.state(lowest).pointee.freeCount == 0 else { return }
        withRoom.remove(lowest)
        if let next = withRoom.first {
            lowest = next
        } else {
            addPage()
        }
    }

    /// Adds a page (allocated when a slot of it is first taken), which becomes the lowest with room.
    private mutating func addPage() {
        lowest = pages.count
        pages.add()
        withRoom.insert(lowest)
    }

    /// Slots handed out so far: every subscription is in `0..<count`.
    var count: UInt32 { UInt32(pages.count * Self.pageSize) }

    /// The pages allocated (tests of their release).
    var pageCount: Int { pages.allocatedCount }

    /// The subscription in `slot`, if any.
    func node(at slot: UInt32) -> SubscriptionNode? {
        unmanagedNode(at: slot)?.takeUnretainedValue()  // Unmanaged: see `unmanagedNode(at:)`
    }

    /// The node in `slot`, `nil` if the slot is free or was never used, without retaining it.
    // Unmanaged: the node its list holds (see the type's comment), valid while the lock is held.
    func unmanagedNode(at slot: UInt32) -> Unmanaged<SubscriptionNode>? {
        pages.existingEntry(slot)?.pointee.node
    }

    /// Puts `node` in `slot`, which `reserve()` returned. `node` must be linked in its list.
    mutating func set(_ node: SubscriptionNode, at slot: UInt32) {
        pages.entry(slot).pointee.node = Unmanaged.passUnretained(node)
    }

    /// Empties `slot`, a free slot of its page from now on; frees the page if that emptied it and
    /// another empty page is kept. O(1), and O(log₆₄ pages) when its page was full.
    @inline(__always)
    mutating func free(_ slot: UInt32) {
        let index = Int(slot / UInt32(Self.pageSize))
        let page = pages.state(index)
        // unsafelyUnwrapped: a live slot's page is allocated (pages are freed only when empty).
        let entry = page.pointee.entries.unsafelyUnwrapped + Int(slot % UInt32(Self.pageSize))
        entry.pointee.node = nil
        entry.pointee.nextFree = page.pointee.freeHead
        page.pointee.freeHead = slot
        page.pointee.freeCount += 1
        if page.pointee.freeCount == 1 || page.pointee.freeCount == UInt32(Self.pageSize) {
            freedFirstOrLast(of: index)
        }
    }

    /// `free` freed the first slot of a full page (which joins the set of pages with room) or the
    /// last used slot of one (which is freed, or kept as the spare).
    private mutating func freedFirstOrLast(of page: Int) {
        if pages.state(page).pointee.freeCount == 1 {
            withRoom.insert(page)
            lowest = Swift.min(lowest, page)
            return
        }
        guard spare >= 0 else {
            spare = page
            return
        }
        // The lower one is kept: new subscriptions go there first.
        pages.release(Swift.max(page, spare))
        spare = Swift.min(page, spare)
    }
}

/// One slot of a ``SlotTable``: its subscription's primary (unretained: see there), or the next
/// free slot of its page.
struct SlotEntry {
    // Unmanaged: valid while the node is linked in its list (see `SlotTable`).
    var node: Unmanaged<SubscriptionNode>?
    var nextFree: UInt32
}

/// A page of a ``SlotTable``: its slots (`nil` if not allocated), its first free slot
/// (`SlotTable.noSlot` if none) and how many it has.
struct SlotPage {
    var entries: UnsafeMutablePointer<SlotEntry>?
    var freeHead: UInt32
    var freeCount: UInt32
}

/// The pages of a ``SlotTable``, freed with the table. Touched only under the bus lock, so its
/// fields need no run-time exclusivity checks.
final class SlotPages {
    @exclusivity(unchecked) private var states = UnsafeMutablePointer<SlotPage>.allocate(capacity: 1)
    @exclusivity(unchecked) private var capacity = 1
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private(set) var allocatedCount = 0

    /// The page `index`, below `count`.
    @inline(__always)
    func state(_ index: Int) -> UnsafeMutablePointer<SlotPage> { states + index }

    /// Adds a page, allocated when a slot of it is first taken. Amortised O(1): the page states
    /// (16 bytes per page) are copied when their room doubles.
    func add() {
        if count == capacity {
            let grown = UnsafeMutablePointer<SlotPage>.allocate(capacity: capacity * 2)
            grown.moveInitialize(from: states, count: count)
            states.deallocate()
            states = grown
            capacity *= 2
        }
        (states + count).initialize(
            to: SlotPage(entries: nil, freeHead: SlotTable.noSlot, freeCount: UInt32(SlotTable.pageSize)))
        count += 1
    }

    /// Allocates page `index`, all of whose slots are free.
    func allocate(_ index: Int) {
        let entries = UnsafeMutablePointer<SlotEntry>.allocate(capacity: SlotTable.pageSize)
        let first = UInt32(index * SlotTable.pageSize)
        for offset in 0..<SlotTable.pageSize {
            let next = offset + 1 < SlotTable.pageSize ? first + UInt32(offset + 1) : SlotTable.noSlot
            (entries + offset).initialize(to: SlotEntry(node: nil, nextFree: next))
        }
        states[index] = SlotPage(entries: entries, freeHead: first, freeCount: UInt32(SlotTable.pageSize))
        allocatedCount += 1
    }

    /// Frees page `index`, whose slots are all free.
    func release(_ index: Int) {
        // The entries hold no references: nothing to deinitialize.
        states[index].entries?.deallocate()
        states[index] = SlotPage(entries: nil, freeHead: SlotTable.noSlot, freeCount: UInt32(SlotTable.pageSize))
        allocatedCount -= 1
    }

    /// The entry of `slot`, whose page is allocated.
    @inline(__always)
    func entry(_ slot: UInt32) -> UnsafeMutablePointer<SlotEntry> {
        // unsafelyUnwrapped: the caller's slot is on an allocated page (see the summary).
        states[Int(slot / UInt32(SlotTable.pageSize))].entries.unsafelyUnwrapped
            + Int(slot % UInt32(SlotTable.pageSize))
    }

    /// The entry of `slot`, if its page is allocated.
    @inline(__always)
    func existingEntry(_ slot: UInt32) -> UnsafeMutablePointer<SlotEntry>? {
        let index = Int(slot / UInt32(SlotTable.pageSize))
        guard index < count, let entries = states[index].entries else { return nil }
        return entries + Int(slot % UInt32(SlotTable.pageSize))
    }

    deinit {
        // The entries hold no references: nothing to deinitialize.
        for index in 0..<count { states[index].entries?.deallocate() }
        states.deinitialize(count: count)
        states.deallocate()
    }
}

/// A set of page numbers that finds its lowest in O(log₆₄ n): a bit per page, and above it
/// levels of a bit per word of the level below that is not 0, up to a level of one word.
struct PageSet {
    /// `levels[0]`: a bit per page; the last level has one word.
    private var levels: [ContiguousArray<UInt64>] = [[0]]

    /// The lowest page in the set, if any. O(levels).
    var first: Int? {
        var index = 0
        for level in levels.indices.reversed() {
            let word = levels[level][index]
            if word == 0 { return nil }
            index = index << 6 | word.trailingZeroBitCount
        }
        return index
    }

    /// O(levels); amortised O(1) more when the set has to grow to hold `page`.
    mutating func insert(_ page: Int) {
        grow(toHold: page)
        var index = page
        for level in levels.indices {
            let wasEmpty = levels[level][index >> 6] == 0
            levels[level][index >> 6] |= 1 << UInt64(index & 63)
            guard wasEmpty else { return }
            index >>= 6
        }
    }

    /// O(levels).
    mutating func remove(_ page: Int) {
        guard page >> 6 < levels[0].count else { return }
        var index = page
        for level in levels.indices {
            levels[level][index >> 6] &= ~(1 << UInt64(index & 63))
            guard levels[level][index >> 6] == 0 else { return }
            index >>= 6
        }
    }

    /// Adds the words (and the levels) that bit `page` needs.
    private mutating func grow(toHold page: Int) {
        var words = page >> 6 + 1
        var level = 0
        while true {
            if levels[level].count < words {
                levels[level].append(contentsOf: repeatElement(0, count: words - levels[level].count))
            }
            words = (levels[level].count + 63) >> 6
            if level == levels.count - 1 {
                guard levels[level].count > 1 else { return }
                // A new top level, over the words of this one.
                var top = ContiguousArray<UInt64>(repeating: 0, count: words)
                for (index, word) in levels[level].enumerated() where word != 0 {
                    top[index >> 6] |= 1 << UInt64(index & 63)
                }
                levels.append(top)
            }
            level += 1
        }
    }
}
