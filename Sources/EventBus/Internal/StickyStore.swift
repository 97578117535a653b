/// What the index needs of a bucket's sticky events without knowing their type.
protocol StickySlots: AnyObject {
    /// Events kept (expired ones included until they are let go of; held ones left out).
    var count: Int { get }
    /// Whether it holds no entry at all, held ones included.
    var isEmpty: Bool { get }
    /// Removes the expired event of the slot whose expiry queue item `item` is (the queue has just
    /// let go of it: its deadline has come at `now`); returns what it removed, to be released
    /// after unlocking.
    func expire(_ item: ExpiryQueue.Item, now: UInt64) -> AnyObject?
    /// Removes every entry; returns them, to be released after unlocking.
    func removeAll() -> AnyObject?
    /// Settles the held entry `sequence` of `key`, if it is still there: removed if a delivery
    /// received it (`received`), kept for the next taker otherwise. Returns what it removed, to be
    /// released after unlocking.
    func settle(key: String?, sequence: UInt64, received: Bool) -> AnyObject?
}

/// The sticky events of one event type on one bus, per key, oldest first. Only touched under the
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
/// A slot that holds an event with a TTL has one item in the bus's ``ExpiryQueue``, kept in step
/// by `replace`, through which every change of a slot goes.
final class StickyStore<E: Sendable>: StickySlots {
    struct Entry {
        let event: E
        let key: String?
        /// From the index's counter: orders entries across keys, names one for the sweep.
        let sequence: UInt64
        /// When it expires, on the bus's sticky clock; `nil`: never.
        let expiry: UInt64?
        /// Kept by `.untilDelivered`: the first taker removes it.
        let takeOnce: Bool
        /// Held back while a delivery that may take it is under way (see the type's comment).
        var isHeld = false

        func isExpired(at now: UInt64) -> Bool { expiry.map { now >= $0 } ?? false }
    }

    /// The events of one key, and the slot's item in the expiry queue.
    private struct Slot {
        var entries: [Entry]
        /// Queued while `entries` has an event with a TTL; `nil` otherwise.
        var expiry: ExpiryQueue.Item?
    }

    private var slots: [String?: Slot] = [:]
    /// The entries kept, held ones left out.
    private(set) var count = 0
    var isEmpty: Bool { slots.isEmpty }
    /// The bus's expiry queue (the index's).
    private let expiries: ExpiryQueue

    init(expiries: ExpiryQueue) {
        self.expiries = expiries
    }

    /// Applies `policy` to `event` (entry `sequence` of `key`); returns the entries it replaced.
    /// `mayBeReceived`: whether the dispatch found a live subscriber when it started; an
    /// `.untilDelivered` event is then held (see the type's comment) until `settle`, and kept at
    /// once otherwise.
    func store(
        _ event: E, key: String?, policy: StickyPolicy, sequence: UInt64, now: UInt64, mayBeReceived: Bool
    ) -> [Entry] {
        var entries: [Entry] = []
        var replaced = slots[key]?.entries ?? []
        switch policy.kind {
        case .latest:
            entries = [Entry(event: event, key: key, sequence: sequence, expiry: nil, takeOnce: false)]
        case .latestWithTTL(let ttl):
            let (expiry, overflow) = now.addingReportingOverflow(ttl)
            entries = [
                Entry(event: event, key: key, sequence: sequence, expiry: overflow ? nil : expiry, takeOnce: false)
            ]
        case .untilDelivered:
            // It replaces what was kept, received or not (an older event is stale now).
            entries = [
                Entry(event: event, key: key, sequence: sequence, expiry: nil, takeOnce: true, isHeld: mayBeReceived)
            ]
        case .last(let limit):
            entries = replaced
            replaced = []
            entries.append(Entry(event: event, key: key, sequence: sequence, expiry: nil, takeOnce: false))
            if entries.count > limit {
                replaced = Array(entries[..<(entries.count - limit)])
                entries.removeFirst(entries.count - limit)
            }
        }
        replace(key, with: entries)
        return replaced
    }

    /// The live (unexpired, not held) entries of the slots `keys` (`nil`: every slot), in dispatch
    /// order. `taking`: the `.untilDelivered` ones are held for this caller, their one taker, who
    /// `settle`s each once it has delivered it or failed to. Expired entries met on the way are
    /// removed and returned in `released`.
    func entries(of keys: [String?]?, now: UInt64, taking: Bool, released: inout [Entry]) -> [Entry] {
        var found: [Entry] = []
        let slotKeys = keys ?? Array(slots.keys)
        for key in slotKeys {
            guard let kept = slots[key]?.entries else { continue }
            var remaining: [Entry] = []
            var changed = false
            for var entry in kept {
                if entry.isExpired(at: now) {
                    released.append(entry)
                    changed = true
                    continue
                }
                if !entry.isHeld {
                    found.append(entry)
                    if taking && entry.takeOnce {
                        entry.isHeld = true
                        changed = true
                    }
                }
                remaining.append(entry)
            }
            if changed { replace(key, with: remaining) }
        }
        if slotKeys.count > 1 { found.sort { $0.sequence < $1.sequence } }
        return found
    }

    func settle(key: String?, sequence: UInt64, received: Bool) -> AnyObject? {
        guard var kept = slots[key]?.entries, let i = kept.firstIndex(where: { $0.sequence == sequence && $0.isHeld })
        else {
            return nil
        }
        var removed: AnyObject?
        if received {
            removed = ReleasedLater(kept.remove(at: i))
        } else {
            kept[i].isHeld = false
        }
        replace(key, with: kept)
        return removed
    }

    /// Removes and returns the latest live entry of `key` that is not held; expired ones go to
    /// `released`.
    func takeLatest(of key: String?, now: UInt64, released: inout [Entry]) -> Entry? {
        guard var kept = slots[key]?.entries else { return nil }
        let expired = kept.filter { $0.isExpired(at: now) }
        released.append(contentsOf: expired)
        kept.removeAll { $0.isExpired(at: now) }
        let taken = kept.lastIndex { !$0.isHeld }.map { kept.remove(at: $0) }
        replace(key, with: kept)
        return taken
    }

    /// Removes every entry of `key`, held ones included; returns them.
    func remove(_ key: String?) -> [Entry] {
        let removed = slots[key]?.entries ?? []
        replace(key, with: [])
        return removed
    }

    func expire(_ item: ExpiryQueue.Item, now: UInt64) -> AnyObject? {
        guard let slot = slots[item.key], slot.expiry === item else { return nil }
        let expired = slot.entries.filter { $0.isExpired(at: now) }
        // With none expired (never: the item's deadline is its event's), `replace` queues it again.
        replace(item.key, with: slot.entries.filter { !$0.isExpired(at: now) })
        return expired.isEmpty ? nil : ReleasedLater(expired)
    }

    func removeAll() -> AnyObject? {
        guard !slots.isEmpty else { return nil }
        let removed = ReleasedLater(slots)
        slots = [:]
        count = 0
        return removed
    }

    /// Puts `entries` in the slot of `key` (removing the slot if there are none), and keeps its
    /// expiry queue item in step: queued, at the deadline of its event with a TTL if it has one,
    /// removed otherwise. That event is the first (only `.latest(ttl:)` makes one, and it replaces
    /// the slot: `.last(n)` appends after it). O(log n) in the queue's items at most (see
    /// ``ExpiryQueue``), O(1) for a later deadline.
    private func replace(_ key: String?, with entries: [Entry]) {
        let old = slots[key]
        count += Self.keptCount(entries) - Self.keptCount(old?.entries ?? [])
        var item = old?.expiry
        if let deadline = entries.first?.expiry {
            if let item {
                expiries.reschedule(item, to: deadline)
            } else {
                item = expiries.schedule(typeID: ObjectIdentifier(E.self), key: key, deadline: deadline)
            }
        } else if let queued = item {
            expiries.remove(queued)
            item = nil
        }
        slots[key] = entries.isEmpty ? nil : Slot(entries: entries, expiry: item)
    }

    /// The entries of `entries` that are not held.
    private static func keptCount(_ entries: [Entry]) -> Int { entries.count { !$0.isHeld } }
}

/// A value held until this box is released (after unlocking), so that its `deinit`s run there.
final class ReleasedLater<Value> {
    private let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
