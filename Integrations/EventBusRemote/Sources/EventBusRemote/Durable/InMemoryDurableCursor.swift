public import Foundation

/// One consumer's cursor in an ``InMemoryDurableStore``, as one owner sees it
/// (``InMemoryDurableStore/cursor(_:owner:)``): a plain consumer's, or a partition's of a group.
///
/// A value: copies refer to the same stored cursor. Every method takes the store's lock once and is
/// atomic; claims and acknowledgements are fenced by the lease's owner and epoch and throw
/// ``DurableStoreError/leaseLost(consumer:)`` otherwise, having moved nothing. Costs: see
/// ``InMemoryDurableStore``.
///
/// ```swift
/// let cursor = store.cursor(DurableConsumerID("mailer"), owner: me)
/// let start = try await cursor.open()
/// if let epoch = try await cursor.takeLease(for: .seconds(3)),
///     let claim = try await cursor.claim(after: start.position, limit: 100, epoch: epoch)
/// {
///     let events = try await cursor.read(after: start.position, through: claim.last, limit: 100)
///     _ = try await cursor.acknowledge(claim.last, claim: .keep, epoch: epoch)
/// }
/// ```
public struct InMemoryDurableCursor: DurableCursor {
    /// The event's number in the store.
    public typealias Position = Int64

    /// The store the cursor is in.
    public let store: InMemoryDurableStore
    /// Which consumer (or partition) this cursor is.
    public let id: DurableConsumerID
    /// The owner whose lease fences this cursor's claims and acknowledgements.
    public let owner: UUID

    /// ``DurableStoreError/leaseLost(consumer:)`` for this consumer.
    public var leaseLost: any Error { DurableStoreError.leaseLost(consumer: id.name) }

    /// Creates the cursor after the store's last event if it is new (its partition, if any, fixed
    /// then); returns where it stands: its position, its claim beyond it, the events retention
    /// deleted before it read them (not reset: the next acknowledgement resets them), and no
    /// announced reset (this store has no cursor resets). O(1), never throws.
    ///
    /// ```swift
    /// let state = try await cursor.open()
    /// if state.expired > 0 { print(state.expired, "events deleted before they were read") }
    /// ```
    public func open() async throws -> DurableCursorState<Int64> {
        store.state.withLock { state in
            let record =
                state.cursors[id.name]
                ?? InMemoryDurableStore.CursorRecord(position: state.lastPosition, partition: id.partition)
            state.cursors[id.name] = record
            return DurableCursorState(position: record.position, claimed: record.claimed, expired: record.expired)
        }
    }

    /// Takes the lease for `duration` if it is free, lapsed or already this owner's, and returns its
    /// new epoch (one more than the last, whoever took that); `nil` while another owner holds it,
    /// and for a cursor not opened yet. O(1), never throws.
    ///
    /// ```swift
    /// guard let epoch = try await cursor.takeLease(for: .seconds(3)) else { return }   // standing by
    /// ```
    public func takeLease(for duration: Duration) async throws -> Int64? {
        store.state.withLock { state in
            let now = ContinuousClock.now
            guard var record = state.cursors[id.name] else { return nil }
            let free = record.owner == nil || record.owner == owner || record.leaseUntil.map { $0 < now } ?? true
            guard free else { return nil }
            record.owner = owner
            record.epoch += 1
            record.leaseUntil = now + duration
            state.cursors[id.name] = record
            return record.epoch
        }
    }

    /// Extends the lease of `epoch` to `duration` from now; `false` if this owner no longer holds
    /// it with that epoch. A lapsed lease nobody took over is still renewed (as on PostgreSQL).
    /// O(1), never throws.
    ///
    /// ```swift
    /// if try await !cursor.renewLease(epoch, for: .seconds(3)) { /* taken over: stop reading */ }
    /// ```
    public func renewLease(_ epoch: Int64, for duration: Duration) async throws -> Bool {
        store.state.withLock { state in
            guard state.holds(id.name, owner: owner, epoch: epoch) else { return false }
            state.cursors[id.name]?.leaseUntil = .now + duration
            return true
        }
    }

    /// Gives the lease of `epoch` up (`nil`: whichever epoch this owner holds) and wakes the
    /// store's registered wakers, so that a reader standing by takes it at once; nothing if this
    /// owner does not hold it. The epoch stays: the next taking increments it. O(wakers), never
    /// throws.
    ///
    /// ```swift
    /// try await cursor.releaseLease(epoch)
    /// ```
    public func releaseLease(_ epoch: Int64?) async throws {
        let released = store.state.withLock { state in
            guard let record = state.cursors[id.name], record.owner == owner, epoch.map({ $0 == record.epoch }) ?? true
            else { return false }
            state.cursors[id.name]?.owner = nil
            state.cursors[id.name]?.leaseUntil = nil
            return true
        }
        if released { store.wakeAll() }
    }

    /// Claims the next events after `position` (at most `limit`; a partition's only), fenced by
    /// `epoch`: returns the batch's last position and how many of this cursor's events it holds,
    /// or `nil` when no event follows `position`. A partition's batch that is not full ends at the
    /// store's last event (the horizon), so that its cursor moves past the other partitions'
    /// events. The claim's end only moves forward. O(log n + batch) for a plain cursor; a
    /// partition's steps over the others' events too.
    ///
    /// - Throws: ``DurableStoreError/leaseLost(consumer:)`` if this owner does not hold the lease
    ///   with `epoch` (nothing claimed).
    ///
    /// ```swift
    /// if let claim = try await cursor.claim(after: position, limit: 500, epoch: epoch) { print(claim.count) }
    /// ```
    public func claim(after position: Int64, limit: Int, epoch: Int64) async throws -> DurableClaim<Int64>? {
        try store.state.withLock { state in
            guard state.holds(id.name, owner: owner, epoch: epoch) else { throw leaseLost }
            let limit = max(0, limit)
            var index = state.firstIndex(after: position)
            var count = 0
            var last: Int64?
            while index < state.events.count, count < limit {
                let event = state.events[index]
                if id.partition?.contains(hash: event.hash) ?? true {
                    count += 1
                    last = event.position
                }
                index += 1
            }
            if id.partition != nil, count < limit, let horizon = state.events.last, horizon.position > position {
                last = horizon.position
            }
            guard let last else { return nil }
            if state.cursors[id.name]?.claimed.map({ $0 < last }) ?? true {
                state.cursors[id.name]?.claimed = last
            }
            return DurableClaim(last: last, count: count, expired: state.cursors[id.name]?.expired ?? 0)
        }
    }

    /// The events after `position` through `last`, in order, at most `limit` (this cursor's
    /// partition's only); events retention deleted are missing. Not fenced. O(log n + batch) for a
    /// plain cursor; a partition's steps over the others' events too. Never throws.
    ///
    /// ```swift
    /// let events = try await cursor.read(after: position, through: claim.last, limit: 500)
    /// ```
    public func read(after position: Int64, through last: Int64, limit: Int) async throws -> [DurableEvent<Int64>] {
        store.state.withLock { state in
            var events: [DurableEvent<Int64>] = []
            var index = state.firstIndex(after: position)
            while index < state.events.count, events.count < limit, state.events[index].position <= last {
                let event = state.events[index]
                if id.partition?.contains(hash: event.hash) ?? true {
                    events.append(DurableEvent(position: event.position, envelope: event.envelope))
                }
                index += 1
            }
            return events
        }
    }

    /// Moves the cursor to `position`, fenced by `epoch`, and updates its claim: `.keep` drops it
    /// if `position` reaches it; `.releaseTo(p)` sets it to `p` if beyond `position`, else drops
    /// it. Returns the events retention deleted before this consumer read them since the last
    /// acknowledgement, and resets that count. O(1).
    ///
    /// - Throws: ``DurableStoreError/leaseLost(consumer:)`` if this owner does not hold the lease
    ///   with `epoch` (nothing moved, nothing reset).
    ///
    /// ```swift
    /// let expired = try await cursor.acknowledge(claim.last, claim: .keep, epoch: epoch)
    /// ```
    public func acknowledge(_ position: Int64, claim: DurableClaimUpdate<Int64>, epoch: Int64) async throws -> Int {
        try store.state.withLock { state in
            guard state.holds(id.name, owner: owner, epoch: epoch), var record = state.cursors[id.name] else {
                throw leaseLost
            }
            record.position = position
            switch claim {
            case .keep:
                if let claimed = record.claimed, claimed <= position { record.claimed = nil }
            case .releaseTo(let kept):
                record.claimed = kept.flatMap { $0 > position ? $0 : nil }
            }
            let expired = record.expired
            record.expired = 0
            state.cursors[id.name] = record
            return expired
        }
    }
}
