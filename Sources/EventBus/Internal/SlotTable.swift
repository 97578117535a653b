/// The live subscriptions of a bus by slot: how a token finds its subscription in O(1) without
/// hashing.
///
/// Slots live in pages of `pageSize`, allocated when the table first needs them and never moved,
/// so growing the table adds one page and copies nothing (a flat array would copy every slot each
/// time it doubles: 5 ms under the bus lock at a million subscriptions, measured). Freed slots are
/// reused first, through a free list threaded through the pages. Touched only under the bus lock.
///
/// A slot refers to its subscription's primary node without retaining it: the node is in the table
/// only while it is linked in its list, which owns it (`TypeIndex.link` links it before
/// `set`, `TypeIndex.end` frees the slot before unlinking, `removeAll` drops the table with the
/// lists). So setting and freeing a slot costs no reference counting.
struct SlotTable {
    static let pageSize = 1024
    private static let noSlot = UInt32.max

    private let pages = SlotPages()
    /// The first free slot, or `noSlot`.
    private var freeHead = SlotTable.noSlot
    /// Slots handed out at least once (the next fresh slot).
    private var used: UInt32 = 0

    /// A slot for a new subscription: a freed one if any, else a fresh one. O(1).
    mutating func reserve() -> UInt32 {
        if freeHead != Self.noSlot {
            let slot = freeHead
            freeHead = pages.entry(slot).pointee.nextFree
            return slot
        }
        let slot = used
        used += 1
        if slot % UInt32(Self.pageSize) == 0 { pages.addPage() }
        return slot
    }

    /// Slots handed out so far: every subscription is in `0..<count`.
    var count: UInt32 { used }

    /// The subscription in `slot`, if any.
    func node(at slot: UInt32) -> SubscriptionNode? {
        unmanagedNode(at: slot)?.takeUnretainedValue()  // Unmanaged: see `unmanagedNode(at:)`
    }

    /// The node in `slot`, `nil` if the slot is free or was never used, without retaining it.
    // Unmanaged: the node its list holds (see the type's comment), valid while the lock is held.
    func unmanagedNode(at slot: UInt32) -> Unmanaged<SubscriptionNode>? {
        guard slot < used else { return nil }
        return pages.entry(slot).pointee.node
    }

    /// Puts `node` in `slot`, which `reserve()` returned. `node` must be linked in its list.
    mutating func set(_ node: SubscriptionNode, at slot: UInt32) {
        pages.entry(slot).pointee.node = Unmanaged.passUnretained(node)
    }

    /// Empties `slot` and makes it the next to be reused. O(1).
    mutating func free(_ slot: UInt32) {
        let entry = pages.entry(slot)
        entry.pointee.node = nil
        entry.pointee.nextFree = freeHead
        freeHead = slot
    }
}

/// One slot of a ``SlotTable``: its subscription's primary (unretained: see there), or the next
/// free slot.
struct SlotEntry {
    // Unmanaged: valid while the node is linked in its list (see `SlotTable`).
    var node: Unmanaged<SubscriptionNode>?
    var nextFree: UInt32
}

/// The pages of a ``SlotTable``, allocated at full size and freed with the table. Touched only
/// under the bus lock, so its field needs no run-time exclusivity checks.
final class SlotPages {
    @exclusivity(unchecked) private var pages = ContiguousArray<UnsafeMutablePointer<SlotEntry>>()

    func addPage() {
        let page = UnsafeMutablePointer<SlotEntry>.allocate(capacity: SlotTable.pageSize)
        page.initialize(repeating: SlotEntry(node: nil, nextFree: 0), count: SlotTable.pageSize)
        pages.append(page)
    }

    /// The entry of `slot`, whose page exists.
    @inline(__always)
    func entry(_ slot: UInt32) -> UnsafeMutablePointer<SlotEntry> {
        pages[Int(slot) / SlotTable.pageSize] + Int(slot) % SlotTable.pageSize
    }

    deinit {
        // The entries hold no references: nothing to deinitialize.
        for page in pages { page.deallocate() }
    }
}
