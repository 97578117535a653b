/// The sticky events of one event type on one bus, per key, oldest first. Not generic: a sticky
/// dispatch reaches it from unspecialized code, where every generic type's metadata would be looked
/// up at run time (that cost a sticky dispatch 0.9 µs against 0.06 for a plain one); the events
/// are boxed instead, and read back as their type (`Entry.event(as:)`). Only touched under the
/// bus lock; what it removes is returned, so that no event is released (no `deinit` runs) there.
///
/// An `.untilDelivered` entry is *held* while a delivery that may be its one taker is under way
/// with no lock held: its dispatch's, when that found live subscribers (any of them may turn out
/// to have lost its owner), or a replay's that took it, until the deliveries they enqueued have
/// run too (see ``StickyHold``). A held entry is not returned, replayed, taken or counted; a newer
/// sticky dispatch of its key still replaces it (`.last(n)` counts it among its `n`), and `remove`
/// removes it. `settle` removes it as soon as a handler ran for it, and otherwise, once every
/// delivery is over, keeps it, in its place, for the next taker. So it is kept exactly when nobody
/// received it, and taken at most once; a replaying subscriber that subscribes while it is held
/// gets it neither live nor replayed, even if it is kept afterwards.
///
/// Each key's entries are a ``RingBuffer``. Only the oldest entry of a key may have a TTL or be
/// taken once (so held): `.latest(ttl:)` and `.untilDelivered` replace the key's entries with
/// theirs, and `.last(n)` appends plain ones after it. So every change touches the ends of a ring:
/// a dispatch, a take, a settle, letting go of an expired event and a removal are O(1) (a
/// `.last(n)` dispatch amortised: its ring doubles as it fills, up to `n`; a smaller `n` than the
/// key's count drops the extra entries then, each once); only returning or replaying `n` entries
/// walks them. A slot that holds an event with a TTL has one item in the bus's ``ExpiryQueue``,
/// kept in step by `update`, through which every change of a slot goes.
final class StickyStore {
    struct Entry {
        /// The event, of the store's type (boxed: the store is not generic, so a sticky dispatch
        /// runs no unspecialized generic code, whose metadata look-ups cost more than the rest).
        let event: any Sendable
        let key: String?
        /// From the registry's counter: orders entries across keys, names one for the sweep.
        let sequence: UInt64
        /// When it expires, on the bus's sticky clock; `nil`: never.
        let expiry: UInt64?
        /// Kept by `.untilDelivered`: the first taker removes it.
        let takeOnce: Bool
        /// Held back while a delivery that may take it is under way (see the type's comment).
        var isHeld = false

        func isExpired(at now: UInt64) -> Bool { expiry.map { now >= $0 } ?? false }

        /// The event, as the store's type `E` (the store keeps events of one type only).
        func event<E>(as _: E.Type) -> E {
            guard let event = event as? E else {
                preconditionFailure("EventBus: a \(E.self) store kept a \(type(of: event))")
            }
            return event
        }
    }

    /// The events of one key, and the slot's item in the expiry queue.
    private struct Slot {
        /// Oldest first; only the oldest may have a TTL or be held (see the type's comment).
        var entries = RingBuffer<Entry>()
        /// Queued while the oldest entry has a TTL; `nil` otherwise.
        var expiry: ExpiryQueue.Item?

        /// The entries kept, the held one left out.
        var keptCount: Int { entries.count - (entries.first?.isHeld ?? false ? 1 : 0) }
    }

    private var slots: [String?: Slot] = [:]
    /// The entries kept, held ones left out.
    private(set) var count = 0
    /// Entries that sticky dispatches wrote, moved or dropped so far (tests of their cost).
    private(set) var entriesMoved = 0
    var isEmpty: Bool { slots.isEmpty }
    /// The bus's expiry queue (the registry's).
    private let expiries: ExpiryQueue
    /// The event type whose events it keeps.
    let typeID: ObjectIdentifier

    init(of typeID: ObjectIdentifier, expiries: ExpiryQueue) {
        self.typeID = typeID
        self.expiries = expiries
    }

    /// Applies `keeping.policy` to `event` (entry `stamp.sequence` of `key`, kept at `stamp.now`);
    /// returns what it replaced, to be released after unlocking. `keeping.mayBeReceived`: whether
    /// the dispatch found a live subscriber when it started; an `.untilDelivered` event is then held
    /// (see the type's comment) until `settle`, and kept at once otherwise. O(1); `.last(n)` amortised (see the type's comment).
    func store(
        _ event: any Sendable, key: String?, _ keeping: (policy: StickyPolicy, mayBeReceived: Bool),
        stamp: (sequence: UInt64, now: UInt64)
    ) -> AnyObject? {
        let (policy, mayBeReceived) = keeping
        let (sequence, now) = stamp
        let entry: Entry
        switch policy.kind {
        case .latest:
            entry = Entry(event: event, key: key, sequence: sequence, expiry: nil, takeOnce: false)
        case .latestWithTTL(let ttl):
            let (expiry, overflow) = now.addingReportingOverflow(ttl)
            entry = Entry(event: event, key: key, sequence: sequence, expiry: overflow ? nil : expiry, takeOnce: false)
        case .untilDelivered:
            // It replaces what was kept, received or not (an older event is stale now).
            entry = Entry(
                event: event, key: key, sequence: sequence, expiry: nil, takeOnce: true, isHeld: mayBeReceived)
        case .last(let limit):
            let appended = Entry(event: event, key: key, sequence: sequence, expiry: nil, takeOnce: false)
            return update(key) { append(appended, to: &$0.entries, keeping: limit) }
        }
        return update(key) { replaceAll(of: &$0.entries, with: entry) }
    }

    /// Appends `entry` to `entries`, dropping the oldest ones so that `limit` are left: one when
    /// the ring is full (the steady state), more only if `limit` is smaller than before. Returns
    /// what it dropped.
    private func append(_ entry: Entry, to entries: inout RingBuffer<Entry>, keeping limit: Int) -> AnyObject? {
        var dropped: AnyObject?
        if entries.count == limit {
            dropped = ReleasedLater(entries.removeFirst())
            entriesMoved += 1
        } else if entries.count > limit {
            var all: [Entry] = []
            while entries.count >= limit { all.append(entries.removeFirst()) }
            entriesMoved += all.count
            dropped = ReleasedLater(all)
        }
        entriesMoved += entries.append(entry, maxCapacity: limit)
        return dropped
    }

    /// Makes `entry` the only one of `entries`; returns what it replaced: a single entry out of
    /// the ring, which is reused (the usual case), or else the whole ring. O(1).
    private func replaceAll(of entries: inout RingBuffer<Entry>, with entry: Entry) -> AnyObject? {
        var replaced: AnyObject?
        if entries.count == 1 {
            replaced = ReleasedLater(entries.removeFirst())
        } else if !entries.isEmpty {
            replaced = ReleasedLater(entries)
            entries = RingBuffer()
        }
        entriesMoved += entries.append(entry, maxCapacity: 1) + (replaced == nil ? 0 : 1)
        return replaced
    }

    /// The live (unexpired, not held) entries of the slots `keys` (`nil`: every slot), in dispatch
    /// order. `taking`: the `.untilDelivered` ones are held for this caller, their one taker, who
    /// `settle`s each once it has delivered it or failed to. Expired entries met on the way are
    /// removed, into `after`. O(entries returned), plus O(keys) for `nil`.
    func entries(of keys: [String?]?, now: UInt64, taking: Bool, after: inout AfterUnlock) -> [Entry] {
        var found: [Entry] = []
        var expired: [Entry] = []
        defer { if !expired.isEmpty { after.release(ReleasedLater(expired)) } }
        let slotKeys = keys ?? Array(slots.keys)
        for key in slotKeys {
            if let entry = removeExpired(of: key, now: now) { expired.append(entry) }
            var holdsFirst = false
            if let entries = slots[key]?.entries {
                found.append(contentsOf: entries.lazy.filter { !$0.isHeld })
                holdsFirst = taking && (entries.first.map { $0.takeOnce && !$0.isHeld } ?? false)
            }
            // With no copy of the ring left (changing a shared one would copy it).
            if holdsFirst { update(key) { $0.entries.updateFirst { $0.isHeld = true } } }
        }
        if slotKeys.count > 1 { found.sort { $0.sequence < $1.sequence } }
        return found
    }

    /// ``entries(of:now:taking:after:)`` of one key, for a read (nothing is taken).
    func entries(of key: String?, now: UInt64, after: inout AfterUnlock) -> [Entry] {
        entries(of: [key], now: now, taking: false, after: &after)
    }

    /// The latest live entry of `key` that is not held, if any; an expired one goes to `after`.
    /// O(1).
    func latest(of key: String?, now: UInt64, after: inout AfterUnlock) -> Entry? {
        if let expired = removeExpired(of: key, now: now) { after.release(ReleasedLater(expired)) }
        guard let latest = slots[key]?.entries.last, !latest.isHeld else { return nil }
        return latest
    }

    /// Settles the held entry `sequence` of `key`, if it is still there: removed if a delivery
    /// received it (`received`), kept for the next taker otherwise. Returns what it removed, to be
    /// released after unlocking. O(1).
    func settle(key: String?, sequence: UInt64, received: Bool) -> AnyObject? {
        // Only the oldest entry may be held.
        guard let first = slots[key]?.entries.first, first.sequence == sequence, first.isHeld else { return nil }
        var removed: AnyObject?
        update(key) { slot in
            if received {
                removed = ReleasedLater(slot.entries.removeFirst())
            } else {
                slot.entries.updateFirst { $0.isHeld = false }
            }
        }
        return removed
    }

    /// Removes and returns the latest live entry of `key` that is not held; an expired one goes to
    /// `after`. O(1).
    func takeLatest(of key: String?, now: UInt64, after: inout AfterUnlock) -> Entry? {
        guard latest(of: key, now: now, after: &after) != nil else { return nil }
        return update(key) { $0.entries.removeLast() }
    }

    /// Removes every entry of `key`, held ones included, into `after` (the ring whole: O(1));
    /// returns how many it removed that were kept and live (neither held nor expired).
    func remove(_ key: String?, now: UInt64, after: inout AfterUnlock) -> Int {
        guard slots[key] != nil else { return 0 }
        return update(key) { slot in
            // An expired entry is never held (only `.untilDelivered` ones are, which have no TTL).
            let removed = slot.keptCount - (slot.entries.first?.isExpired(at: now) ?? false ? 1 : 0)
            after.release(ReleasedLater(slot.entries))
            slot.entries = RingBuffer()
            return removed
        }
    }

    /// Removes the expired event of the slot whose expiry queue item `item` is (the queue has just
    /// let go of it: its deadline has come at `now`); returns what it removed, to be released after
    /// unlocking.
    func expire(_ item: ExpiryQueue.Item, now: UInt64) -> AnyObject? {
        guard slots[item.key]?.expiry === item else { return nil }
        guard let expired = removeExpired(of: item.key, now: now) else {
            // Never: the item's deadline is its event's. Queued again, for that deadline.
            expiries.reschedule(item, to: item.deadline)
            return nil
        }
        return ReleasedLater(expired)
    }

    /// Removes every entry; returns them, to be released after unlocking.
    func removeAll() -> AnyObject? {
        guard !slots.isEmpty else { return nil }
        let removed = ReleasedLater(slots)
        slots = [:]
        count = 0
        return removed
    }

    /// Removes and returns the oldest entry of `key` if it has expired at `now` (only the oldest
    /// may have a TTL). O(1), plus taking its item out of the expiry queue.
    private func removeExpired(of key: String?, now: UInt64) -> Entry? {
        guard slots[key]?.entries.first?.isExpired(at: now) ?? false else { return nil }
        return update(key) { $0.entries.removeFirst() }
    }

    /// Runs `body` on the slot of `key` (a new, empty one if there is none), in place, then keeps
    /// the count, the slot's expiry queue item and the table in step: the item queued at the
    /// deadline of the slot's oldest entry if it has one, removed otherwise; the slot removed if
    /// empty. O(1) besides `body`, plus O(log n) in the queue's items at most (see
    /// ``ExpiryQueue``), O(1) for a later deadline.
    private func update<R>(_ key: String?, _ body: (inout Slot) -> R) -> R {
        func change(_ slot: inout Slot) -> (result: R, isEmpty: Bool) {
            let before = slot.keptCount
            let result = body(&slot)
            count += slot.keptCount - before
            if let deadline = slot.entries.first?.expiry {
                if let item = slot.expiry {
                    expiries.reschedule(item, to: deadline)
                } else {
                    slot.expiry = expiries.schedule(typeID: typeID, key: key, deadline: deadline)
                }
            } else if let item = slot.expiry {
                expiries.remove(item)
                slot.expiry = nil
            }
            return (result, slot.entries.isEmpty)
        }
        // In place: a copy of the slot would share its ring, which would then be copied.
        let changed = change(&slots[key, default: Slot()])
        if changed.isEmpty { slots[key] = nil }
        return changed.result
    }
}

/// A value held until this box is released (after unlocking), so that its `deinit`s run there.
final class ReleasedLater<Value> {
    private let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
