/// The live subscriptions of a bus by slot: how a token finds its subscription in O(1) without
/// hashing.
///
/// Slots live in pages of `pageSize`, allocated when the table first needs them and never moved,
/// so growing the table adds one page and copies nothing (a flat array would copy every slot each
/// time it doubles: 5 ms under the bus lock at a million subscriptions, measured). Freed slots are
/// reused first, through a free list threaded through the pages. Touched only under the bus lock.
struct SlotTable {
    static let pageSize = 1024
    private static let noSlot = UInt32.max

    private var pages = ContiguousArray<SlotPage>()
    /// The first free slot, or `noSlot`.
    private var freeHead = SlotTable.noSlot
    /// Slots handed out at least once (the next fresh slot).
    private var used: UInt32 = 0

    /// A slot for a new subscription: a freed one if any, else a fresh one. O(1).
    mutating func reserve() -> UInt32 {
        if freeHead != Self.noSlot {
            let slot = freeHead
            let (page, offset) = Self.locate(slot)
            freeHead = pages[page].nextFree[offset]
            return slot
        }
        let slot = used
        used += 1
        if Self.locate(slot).offset == 0 { pages.append(SlotPage()) }
        return slot
    }

    /// Slots handed out so far: every subscription is in `0..<count`.
    var count: UInt32 { used }

    /// The subscription in `slot`, if any.
    func node(at slot: UInt32) -> SubscriptionNode? {
        guard slot < used else { return nil }
        let (page, offset) = Self.locate(slot)
        return pages[page].nodes[offset]
    }

    /// Puts `node` in `slot`, which `reserve()` returned.
    mutating func set(_ node: SubscriptionNode, at slot: UInt32) {
        let (page, offset) = Self.locate(slot)
        pages[page].nodes[offset] = node
    }

    /// Empties `slot` and makes it the next to be reused. O(1).
    mutating func free(_ slot: UInt32) {
        let (page, offset) = Self.locate(slot)
        pages[page].nodes[offset] = nil
        pages[page].nextFree[offset] = freeHead
        freeHead = slot
    }

    private static func locate(_ slot: UInt32) -> (page: Int, offset: Int) {
        (Int(slot) / pageSize, Int(slot) % pageSize)
    }
}

/// One page of a ``SlotTable``: its slots' subscriptions and free-list links, allocated at full size.
/// Touched only under the bus lock, so its fields need no run-time exclusivity checks.
final class SlotPage {
    @exclusivity(unchecked) var nodes = ContiguousArray<SubscriptionNode?>(repeating: nil, count: SlotTable.pageSize)
    @exclusivity(unchecked) var nextFree = ContiguousArray<UInt32>(repeating: 0, count: SlotTable.pageSize)
}
