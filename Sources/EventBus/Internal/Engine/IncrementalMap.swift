internal import _EventBusShims

/// A hash map that grows and shrinks with bounded work per operation: the map of a bucket's keys
/// and a bag's tokens, which must give memory back after a peak (a `Dictionary` never shrinks when
/// entries are removed, and grows by rehashing every entry at once).
///
/// Open addressing, linear probing, backward-shift deletion (no tombstones), in tables whose
/// capacity is a power of two. A table more than 3/4 full grows to twice its capacity; one less
/// than 1/8 full shrinks to a quarter of it. Either is progressive, as Redis rehashes: while it
/// resizes the map has two tables; look-ups try the new one, then the old one; new keys go to the
/// new one; and every insertion or removal takes a step of the move, looking at most at
/// ``stepSlots`` empty slots of the old table and moving at most ``stepEntries`` entries. The old
/// table is let go of once empty (``takeSpentTable()``, so that its memory is freed after
/// unlocking). A resize is over before the new table is 5/8 full, whatever is inserted meanwhile,
/// so the new table never needs to resize first.
///
/// Costs: a look-up hashes the key once and is O(1) expected (two probe sequences while
/// resizing); an insertion or a removal the same, plus one step. Iterating is O(capacity). Once
/// operations follow a fall in the count, the tables are back to at most 8 times what the count
/// needs (or ``minimumCapacity``).
///
/// Not copy-on-write: a map has one owner, under a lock (a copy would share its tables). A value
/// is reached through a pointer, valid until the map next changes.
struct IncrementalMap<Key: Hashable, Value> {
    typealias Table = IncrementalMapTable<Key, Value>

    /// Where a key's entry is.
    struct Index {
        /// The entry's value, valid until the map next changes.
        let value: UnsafeMutablePointer<Value>
        fileprivate let slot: Int
        fileprivate let isInOld: Bool
    }

    /// The table new keys go to; `nil` until the first.
    private var table: Table?
    /// While resizing, the table whose entries are being moved into `table`; its slots below
    /// `cursor` are empty.
    private var old: Table?
    private var cursor = 0
    /// An old table emptied by the last step, until the owner takes it.
    private var spent: Table?
    /// Entries moved by resizing so far (tests of the bound per operation).
    private(set) var movedEntries = 0

    static var minimumCapacity: Int { 8 }
    /// The most empty slots of the old table one step looks at.
    static var stepSlots: Int { 64 }
    /// The most entries one step moves.
    static var stepEntries: Int { 8 }

    init() {}

    var count: Int { (table?.count ?? 0) + (old?.count ?? 0) }

    var isEmpty: Bool { count == 0 }

    /// The slots of both tables.
    var capacity: Int { (table?.capacity ?? 0) + (old?.capacity ?? 0) }

    /// Whether a resize is in progress (two tables).
    var isResizing: Bool { old != nil }

    /// Never 0 (an empty slot's mark): the top bit is set, the slot comes from the low bits.
    @inline(__always)
    private static func hash(of key: Key) -> Int { key.hashValue | Int.min }

    /// Where `key`'s entry is, if it has one.
    @inline(__always)
    func index(forKey key: Key) -> Index? {
        guard let table else { return nil }
        let hash = Self.hash(of: key)
        if let slot = table.find(key, hash: hash) {
            return Index(value: table.values + slot, slot: slot, isInOld: false)
        }
        guard let old, let slot = old.find(key, hash: hash) else { return nil }
        return Index(value: old.values + slot, slot: slot, isInOld: true)
    }

    /// The value of `key`, first added as `make()` if the key has none. Takes a step of a resize.
    @inline(__always)
    mutating func value(forKey key: Key, default make: @autoclosure () -> Value) -> UnsafeMutablePointer<Value> {
        if old != nil { step() }
        if let index = index(forKey: key) { return index.value }
        if old == nil { makeRoom() }
        let table = table!  // made by `makeRoom` if there was none
        return table.values + table.insert(key, make(), hash: Self.hash(of: key))
    }

    /// Removes the entry at `index` and returns its value. Takes a step of a resize, or starts one
    /// if the table is now less than 1/8 full.
    @inline(__always)
    @discardableResult
    mutating func remove(at index: Index) -> Value {
        let removed = (index.isInOld ? old! : table!).remove(at: index.slot).value
        if old != nil {
            step()
        } else if let table, table.capacity > Self.minimumCapacity, table.count * 8 < table.capacity {
            resize(to: Swift.max(Self.minimumCapacity, table.capacity / 4))
        }
        return removed
    }

    /// The old table that the last step emptied, if any, for the caller to release (after
    /// unlocking).
    @inline(__always)
    mutating func takeSpentTable() -> AnyObject? { spent.take() }

    /// Calls `body` with each value (of both tables). O(capacity).
    func forEachValue(_ body: (UnsafeMutablePointer<Value>) -> Void) {
        table?.forEachValue(body)
        old?.forEachValue(body)
    }

    /// Makes a first table, or starts growing one that a new key would make more than 3/4 full.
    private mutating func makeRoom() {
        guard let table else {
            table = Table(capacity: Self.minimumCapacity)
            return
        }
        if (table.count + 1) * 4 > table.capacity * 3 { resize(to: table.capacity * 2) }
    }

    private mutating func resize(to capacity: Int) {
        old = table
        table = Table(capacity: capacity)
        cursor = 0
    }

    /// Moves entries of the old table into the new one, from `cursor` on: at most `stepEntries`
    /// entries, past at most `stepSlots` empty slots. Taking the entry at `cursor` may shift a later
    /// one back into its slot; the slots below `cursor` stay empty (the old table gets no new entry,
    /// and a removal shifts entries back only from above it).
    private mutating func step() {
        guard let old, let table else { return }
        var emptySlots = 0
        var moved = 0
        while old.count > 0 && emptySlots < Self.stepSlots && moved < Self.stepEntries {
            guard old.hashes[cursor] != 0 else {
                cursor += 1
                emptySlots += 1
                continue
            }
            let entry = old.remove(at: cursor)
            _ = table.insert(entry.key, entry.value, hash: entry.hash)
            moved += 1
        }
        movedEntries += moved
        guard old.count == 0 else { return }
        spent = old
        self.old = nil
        cursor = 0
    }
}

/// One table of an ``IncrementalMap``: `capacity` slots, each empty (hash 0) or holding a key, its
/// value and its hash, in one zeroed allocation (its empty marks cost no pass over it; a large one
/// is mapped from the system, and given back to it when the table is released). Touched only under
/// its owner's lock.
final class IncrementalMapTable<Key: Hashable, Value> {
    let mask: Int
    @exclusivity(unchecked) private(set) var count = 0
    let hashes: UnsafeMutablePointer<Int>
    let keys: UnsafeMutablePointer<Key>
    let values: UnsafeMutablePointer<Value>
    /// The size of the allocation.
    private let bytes: Int

    /// `capacity`: a power of two.
    init(capacity: Int) {
        mask = capacity - 1
        let keysOffset = Self.roundUp(capacity * MemoryLayout<Int>.stride, to: MemoryLayout<Key>.alignment)
        let valuesOffset = Self.roundUp(
            keysOffset + capacity * MemoryLayout<Key>.stride, to: MemoryLayout<Value>.alignment)
        bytes = valuesOffset + capacity * MemoryLayout<Value>.stride
        guard let memory = eventbus_allocate_zeroed(bytes) else { fatalError("EventBus: out of memory") }
        hashes = memory.bindMemory(to: Int.self, capacity: capacity)
        keys = (memory + keysOffset).bindMemory(to: Key.self, capacity: capacity)
        values = (memory + valuesOffset).bindMemory(to: Value.self, capacity: capacity)
    }

    deinit {
        if count > 0 {
            for slot in 0...mask where hashes[slot] != 0 {
                (keys + slot).deinitialize(count: 1)
                (values + slot).deinitialize(count: 1)
            }
        }
        eventbus_free_zeroed(hashes, bytes)
    }

    var capacity: Int { mask + 1 }

    private static func roundUp(_ offset: Int, to alignment: Int) -> Int {
        (offset + alignment - 1) & ~(alignment - 1)
    }

    /// The slot of `key`, whose hash is `hash`, if it is here.
    @inline(__always)
    func find(_ key: Key, hash: Int) -> Int? {
        var slot = hash & mask
        while true {
            let stored = hashes[slot]
            if stored == 0 { return nil }
            if stored == hash && keys[slot] == key { return slot }
            slot = (slot &+ 1) & mask
        }
    }

    /// Adds `key`, which is not here, with `value`; returns its slot. The table has room.
    @inline(__always)
    func insert(_ key: consuming Key, _ value: consuming Value, hash: Int) -> Int {
        var slot = hash & mask
        while hashes[slot] != 0 { slot = (slot &+ 1) & mask }
        hashes[slot] = hash
        (keys + slot).initialize(to: key)
        (values + slot).initialize(to: value)
        count += 1
        return slot
    }

    /// Removes the entry in `slot` and returns it, shifting back the entries after it that its
    /// removal would cut off from their home slot (to the next empty slot: O(1) expected).
    func remove(at slot: Int) -> (hash: Int, key: Key, value: Value) {
        let removed = (hash: hashes[slot], key: (keys + slot).move(), value: (values + slot).move())
        count -= 1
        var hole = slot
        var next = (slot &+ 1) & mask
        while hashes[next] != 0 {
            let hash = hashes[next]
            // The entry may fill the hole if the hole is between its home slot and where it is.
            if (next &- hash) & mask >= (next &- hole) & mask {
                hashes[hole] = hash
                (keys + hole).moveInitialize(from: keys + next, count: 1)
                (values + hole).moveInitialize(from: values + next, count: 1)
                hole = next
            }
            next = (next &+ 1) & mask
        }
        hashes[hole] = 0
        return removed
    }

    func forEachValue(_ body: (UnsafeMutablePointer<Value>) -> Void) {
        guard count > 0 else { return }
        for slot in 0...mask where hashes[slot] != 0 { body(values + slot) }
    }
}
