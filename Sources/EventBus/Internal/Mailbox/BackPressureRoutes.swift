/// A bus's back-pressure lanes by event type: what ``EventBus/send(_:)`` checks before its walk.
/// Weak: a lane is filed when its subscription is made and removes itself when it goes. Its own
/// lock, never taken with another; O(1) per operation under it (a lookup hands out the type's
/// table, copied on write, and the lanes are loaded after unlocking).
final class BackPressureRoutes: Sendable {
    // A class: see `MailboxDirectory.Entry`.
    private final class Entry: @unchecked Sendable {
        // @unchecked Sendable: immutable but for the weak reference, which the runtime guards.
        weak var lane: MailboxLaneBase?
        /// The subscription's keys; empty for every key.
        let keys: [String]

        init(lane: MailboxLaneBase, keys: [String]) {
            self.lane = lane
            self.keys = keys
        }
    }

    private let lanes = Locked([ObjectIdentifier: [ObjectIdentifier: Entry]]())
    /// How many lanes are filed: `send` with none costs one atomic load.
    private let count = AtomicCounter()

    /// Files `lane`, a subscription to `type` with `keys`.
    func add(_ lane: MailboxLaneBase, type: ObjectIdentifier, keys: [String]) {
        lanes.withLock { lanes in lanes[type, default: [:]][ObjectIdentifier(lane)] = Entry(lane: lane, keys: keys) }
        count.add(1)
        lane.route = (self, type)
    }

    /// Forgets the lane `id` of `type` (called from its deinit).
    func remove(_ id: ObjectIdentifier, type: ObjectIdentifier) {
        let removed = lanes.withLock { lanes in
            let removed = lanes[type]?.removeValue(forKey: id) != nil
            if lanes[type]?.isEmpty == true { lanes[type] = nil }
            return removed
        }
        if removed { count.add(-1) }
    }

    /// Waits while a back-pressure lane of `type` that `key` reaches is above its high watermark
    /// (``MailboxLaneBase/waitForRoom(id:)``), until none is, or the task is cancelled.
    func waitForRoom(type: ObjectIdentifier, key: String?) async {
        guard count.current > 0 else { return }
        let id = UInt64.random(in: .min ... .max)
        while !Task.isCancelled {
            let table = lanes.withLock { lanes in lanes[type] } ?? [:]
            let full = table.values.first { entry in
                (entry.keys.isEmpty || key.map(entry.keys.contains) == true)
                    && entry.lane?.isAboveHighWatermark() == true
            }
            guard let full, let lane = full.lane else { return }
            await lane.waitForRoom(id: id)
        }
    }
}
