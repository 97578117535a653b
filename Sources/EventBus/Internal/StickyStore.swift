/// What the index needs of a bucket's sticky events without knowing their type.
protocol StickySlots: AnyObject {
    /// Events kept (expired ones included until they are let go of).
    var count: Int { get }
    var isEmpty: Bool { get }
    /// Removes the entry `sequence` of `key` if it is still kept and has expired at `now`; returns
    /// what it removed, to be released after unlocking.
    func expire(key: String?, sequence: UInt64, now: UInt64) -> AnyObject?
    /// Removes every entry; returns them, to be released after unlocking.
    func removeAll() -> AnyObject?
}

/// The sticky events of one event type on one bus, per key, oldest first. Only touched under the
/// bus lock; what it removes is returned, so that no event is released (no `deinit` runs) there.
final class StickyStore<E: Sendable>: StickySlots {
    struct Entry {
        let event: E
        /// From the index's counter: orders entries across keys, names one for the sweep.
        let sequence: UInt64
        /// When it expires, on the bus's sticky clock; `nil`: never.
        let expiry: UInt64?
        /// Kept by `.untilDelivered`: the first taker removes it.
        let takeOnce: Bool

        func isExpired(at now: UInt64) -> Bool { expiry.map { now >= $0 } ?? false }
    }

    private var slots: [String?: [Entry]] = [:]
    private(set) var count = 0
    var isEmpty: Bool { count == 0 }

    /// Applies `policy` to `event` (entry `sequence` of `key`); returns the entries it replaced.
    /// `received`: whether the dispatch reached a subscriber (`.untilDelivered` keeps nothing then).
    func store(
        _ event: E, key: String?, policy: StickyPolicy, sequence: UInt64, now: UInt64, received: Bool
    ) -> [Entry] {
        var entries: [Entry] = []
        var replaced = slots[key] ?? []
        switch policy.kind {
        case .latest:
            entries = [Entry(event: event, sequence: sequence, expiry: nil, takeOnce: false)]
        case .latestWithTTL(let ttl):
            let (expiry, overflow) = now.addingReportingOverflow(ttl)
            entries = [Entry(event: event, sequence: sequence, expiry: overflow ? nil : expiry, takeOnce: false)]
        case .untilDelivered:
            // Received: it replaces what was kept with nothing (an older event is stale now).
            if !received { entries = [Entry(event: event, sequence: sequence, expiry: nil, takeOnce: true)] }
        case .last(let limit):
            entries = replaced
            replaced = []
            entries.append(Entry(event: event, sequence: sequence, expiry: nil, takeOnce: false))
            if entries.count > limit {
                replaced = Array(entries[..<(entries.count - limit)])
                entries.removeFirst(entries.count - limit)
            }
        }
        count += entries.count - (slots[key]?.count ?? 0)
        slots[key] = entries.isEmpty ? nil : entries
        return replaced
    }

    /// The live (unexpired) entries of the slots `keys` (`nil`: every slot), in dispatch order. `taking`: the
    /// `.untilDelivered` ones are removed (this caller is their one taker). Expired entries met on
    /// the way are removed and returned in `released`.
    func entries(of keys: [String?]?, now: UInt64, taking: Bool, released: inout [Entry]) -> [Entry] {
        var found: [Entry] = []
        let slotKeys = keys ?? Array(slots.keys)
        for key in slotKeys {
            guard let kept = slots[key] else { continue }
            var remaining: [Entry] = []
            for entry in kept {
                if entry.isExpired(at: now) {
                    released.append(entry)
                } else {
                    found.append(entry)
                    if !(taking && entry.takeOnce) { remaining.append(entry) }
                }
            }
            if remaining.count != kept.count { replace(key, with: remaining) }
        }
        if slotKeys.count > 1 { found.sort { $0.sequence < $1.sequence } }
        return found
    }

    /// Removes and returns the latest live entry of `key`; expired ones go to `released`.
    func takeLatest(of key: String?, now: UInt64, released: inout [Entry]) -> Entry? {
        guard var kept = slots[key] else { return nil }
        let expired = kept.filter { $0.isExpired(at: now) }
        released.append(contentsOf: expired)
        kept.removeAll { $0.isExpired(at: now) }
        let taken = kept.popLast()
        replace(key, with: kept)
        return taken
    }

    /// Removes every entry of `key`; returns them.
    func remove(_ key: String?) -> [Entry] {
        let removed = slots[key] ?? []
        replace(key, with: [])
        return removed
    }

    func expire(key: String?, sequence: UInt64, now: UInt64) -> AnyObject? {
        guard let kept = slots[key], let i = kept.firstIndex(where: { $0.sequence == sequence }),
            kept[i].isExpired(at: now)
        else { return nil }
        var remaining = kept
        let removed = remaining.remove(at: i)
        replace(key, with: remaining)
        return ReleasedLater(removed)
    }

    func removeAll() -> AnyObject? {
        guard !slots.isEmpty else { return nil }
        let removed = ReleasedLater(slots)
        slots = [:]
        count = 0
        return removed
    }

    private func replace(_ key: String?, with entries: [Entry]) {
        count += entries.count - (slots[key]?.count ?? 0)
        slots[key] = entries.isEmpty ? nil : entries
    }
}

/// A value held until this box is released (after unlocking), so that its `deinit`s run there.
final class ReleasedLater<Value> {
    private let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
