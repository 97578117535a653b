public import Foundation

/// A ``DurableStore`` in memory: one channel's events and its consumers' cursors, for durable
/// delivery inside one process (tests, a single-process app) and as the reference the
/// `DurableStoreConformance` suite checks PostgreSQL against.
///
/// Events are numbered 1, 2, 3… (``Position`` is that `Int64`); an append is atomic and
/// immediately readable (there is no transaction that could still place an event before it).
/// Each event keeps the hash of its ordering key (``RemoteBridge/orderingHash(ofEnvelope:)``) and
/// the time it was appended. Cursors are keyed by ``DurableConsumerID/name``; a partition's cursor
/// (``DurableConsumerID/init(group:partition:of:)``) sees only its partition's events. Leases run
/// on `ContinuousClock`. Appends and released leases wake the registered ``DurableWaker``s
/// (``register(_:)``), so ``DurableTransport`` readers read at once. It keeps events to publish at
/// a time too (a ``DurableScheduleStore``, due by the wall clock): see ``DurableScheduler``; and
/// dead letters (a ``DurableDeadLetterStore``: ids 1, 2, 3…, each letter's event id its event's
/// position, dated by the wall clock; a requeue that marks a letter wakes the wakers too).
///
/// Nothing survives the process: events, cursors, leases, scheduled events and dead letters live
/// as long as the store (``cleanUp(_:)`` never deletes a dead letter, as on PostgreSQL).
///
/// Thread-safe: all state is under one lock, and every operation takes it once (nothing but the
/// store's own bookkeeping runs under it; wakers are woken after it is released, scheduled events
/// sealed before it is taken). Costs, for `n` stored events, `c` cursors, `w` registered wakers,
/// `s` scheduled events and `l` dead letters kept:
/// - ``append(_:)``: O(batch + w), the hashing outside the lock;
/// - ``InMemoryDurableCursor/claim(after:limit:epoch:)`` and
///   ``InMemoryDurableCursor/read(after:through:limit:)``: O(log n + batch) for a plain cursor;
///   a partition's cursor also steps over the other partitions' events between its own (at most
///   the events after its position);
/// - ``InMemoryDurableCursor/open()``, leases, acknowledgements: O(1) (a hash lookup);
/// - ``cleanUp(_:)``: O(n + c log c + deleted × c + s) — it rebuilds the event array once;
/// - ``schedule(_:id:due:)``: O(log s); ``fireDue(lookingAhead:limit:seal:)``: O(k log s) for `k`
///   events taken, plus their append; ``cancelScheduled(_:)``: O(1);
/// - ``deadLetter(_:of:wireName:attempts:reason:)``: amortized O(1);
///   ``deadLetters(of:after:limit:)``: O(log l + k), `k` the letters after `after` it steps over
///   until `limit` match (all of them, at worst: the channel's letters are not indexed by
///   consumer); ``requeueDeadLetters(_:of:)``: O(log l) by id, O(l + w) otherwise.
///
/// ```swift
/// let store = InMemoryDurableStore()
/// let mailer = RemoteBridge(bus: bus, transport: DurableTransport(store: store, consumer: DurableConsumerID("mailer")))
/// Task { try await mailer.run() }
/// ```
public final class InMemoryDurableStore: WakingDurableStore {
    /// A place in the store's order: the event's number, from 1; 0 is before every event.
    public typealias Position = Int64

    /// A cursor of this store.
    public typealias Cursor = InMemoryDurableCursor

    let state = Locked(State())

    /// An event as stored.
    struct Stored: Sendable {
        let position: Int64
        let envelope: String
        let hash: Int32
        let appendedAt: ContinuousClock.Instant
    }

    /// A cursor as stored: where it stands, its claim, its expired count and its lease.
    struct CursorRecord: Sendable {
        var position: Int64
        var claimed: Int64?
        var expired = 0
        var owner: UUID?
        var leaseUntil: ContinuousClock.Instant?
        var epoch: Int64 = 0
        let partition: DurablePartition?

        /// Whether an event of hash `hash` is this cursor's.
        func sees(_ hash: Int32) -> Bool {
            partition?.contains(hash: hash) ?? true
        }
    }

    struct State: Sendable {
        /// In position order; deleted events are gone.
        var events: [Stored] = []
        var lastPosition: Int64 = 0
        var cursors: [String: CursorRecord] = [:]
        var wakers: [ObjectIdentifier: DurableWaker] = [:]
        /// Scheduled events, pending or decided (kept for ``scheduleRetention`` once decided).
        var scheduled: [UUID: ScheduledRecord] = [:]
        /// The pending scheduled events by due time.
        var dueQueue = DueQueue()
        var scheduledCount = 0
        /// Dead letters in id order (ids only grow), kept until a retry of a requeued one deletes
        /// it (``cleanUp(_:)`` keeps them, as on PostgreSQL).
        var deadLetters: [DeadLetterRecord] = []
        var lastDeadLetterID: Int64 = 0

        /// The index of the first event after `position`: O(log n).
        func firstIndex(after position: Int64) -> Int {
            events.partitioningIndex { $0.position <= position }
        }

        /// Whether `owner` holds the lease of `consumer` with `epoch` (the end is not checked: a
        /// lapsed lease nobody took over is still its owner's, as on PostgreSQL).
        func holds(_ consumer: String, owner: UUID, epoch: Int64) -> Bool {
            guard let record = cursors[consumer] else { return false }
            return record.owner == owner && record.epoch == epoch
        }
    }

    /// How long a scheduled event that fired, was cancelled or was refused stays known to
    /// ``cancelScheduled(_:)`` (which says who won) before ``cleanUp(_:)`` forgets it.
    public let scheduleRetention: Duration

    /// An empty store; scheduled events are remembered `scheduleRetention` (7 days by default, as
    /// EventBusPostgres) after they fired or were cancelled.
    ///
    /// ```swift
    /// let store = InMemoryDurableStore()
    /// ```
    public init(scheduleRetention: Duration = .seconds(7 * 86_400)) {
        self.scheduleRetention = scheduleRetention
    }

    /// Appends `envelopes` in this order, in one atomic write, each with the hash of its ordering
    /// key and the time, and wakes every registered waker. Readable at once. O(batch + wakers);
    /// the hashes are computed outside the lock. Never throws.
    ///
    /// ```swift
    /// try await store.append([envelope])
    /// ```
    public func append(_ envelopes: [String]) async throws {
        guard !envelopes.isEmpty else { return }
        let hashes = envelopes.map(RemoteBridge.orderingHash(ofEnvelope:))
        let wakers = state.withLock { state in
            let now = ContinuousClock.now
            state.events.reserveCapacity(state.events.count + envelopes.count)
            for (envelope, hash) in zip(envelopes, hashes) {
                state.lastPosition += 1
                state.events.append(
                    Stored(position: state.lastPosition, envelope: envelope, hash: hash, appendedAt: now))
            }
            return Array(state.wakers.values)
        }
        for waker in wakers { waker.wake() }
    }

    /// The cursor of `consumer` as `owner` sees it; nothing is stored until it is opened
    /// (``InMemoryDurableCursor/open()``). O(1), thread-safe.
    ///
    /// ```swift
    /// let cursor = store.cursor(DurableConsumerID("mailer"), owner: UUID())
    /// ```
    public func cursor(_ consumer: DurableConsumerID, owner: UUID) -> InMemoryDurableCursor {
        InMemoryDurableCursor(store: self, id: consumer, owner: owner)
    }

    /// Deletes the events every cursor has acknowledged, then those beyond `retention` (events
    /// after the newest `count`, and events appended longer than `age` ago), except the events a
    /// cursor has claimed and not acknowledged, whichever cursor and partition. Each event deleted
    /// by retention is counted as expired for every cursor that had not passed it and sees it (a
    /// partition's cursor counts only its own partition's events); the count is reported by
    /// ``InMemoryDurableCursor/open()`` and returned (and reset) by the next acknowledgement.
    /// Returns how many events it deleted. A store without cursors deletes nothing that all have
    /// passed (there is no "all"), and only what retention says.
    ///
    /// Scheduled events that fired, were cancelled or were refused longer ago than
    /// ``scheduleRetention`` are forgotten too (not counted in the result).
    ///
    /// O(n + c log c + deleted × c + s) under the lock (the event array is rebuilt once), for `n`
    /// events, `c` cursors and `s` scheduled events kept. Never throws.
    ///
    /// ```swift
    /// let deleted = try await store.cleanUp(DurableRetention(count: 10_000, age: .seconds(3_600)))
    /// ```
    public func cleanUp(_ retention: DurableRetention) async throws -> Int {
        state.withLock { state in
            let now = ContinuousClock.now
            var deleted = 0
            // Scheduled events decided longer ago than their retention are forgotten.
            let forgotten = Date().addingTimeInterval(-Self.seconds(scheduleRetention))
            state.scheduled = state.scheduled.filter { $0.value.decidedAt.map { $0 >= forgotten } ?? true }
            // Everything every cursor has passed.
            if let passed = state.cursors.values.lazy.map(\.position).min() {
                let end = state.firstIndex(after: passed)
                state.events.removeSubrange(0..<end)
                deleted += end
            }
            // Retention: the newest event at or before which everything may go.
            var bound: Int64?
            if let count = retention.count, let last = state.events.last {
                bound = last.position - Int64(max(0, count))
            }
            if let age = retention.age {
                let oldest = now - max(.zero, age)
                // The last event appended before `oldest` (appends are in time order).
                let low = state.events.partitioningIndex { $0.appendedAt < oldest }
                if low > 0 { bound = max(bound ?? .min, state.events[low - 1].position) }
            }
            guard let bound else { return deleted }
            let end = state.firstIndex(after: bound)
            guard end > 0 else { return deleted }
            // The claimed, unacknowledged ranges (position, claimed] of every cursor, merged.
            var claims: [(after: Int64, through: Int64)] = []
            let ranges = state.cursors.values.compactMap { record in
                record.claimed.flatMap { $0 > record.position ? (after: record.position, through: $0) : nil }
            }
            for range in ranges.sorted(by: { $0.after < $1.after }) {
                if let last = claims.last, range.after <= last.through {
                    claims[claims.count - 1].through = max(last.through, range.through)
                } else {
                    claims.append(range)
                }
            }
            var kept: [Stored] = []
            var gone: [Stored] = []
            var claim = 0
            for event in state.events[0..<end] {
                while claim < claims.count, claims[claim].through < event.position { claim += 1 }
                if claim < claims.count, claims[claim].after < event.position {
                    kept.append(event)
                } else {
                    gone.append(event)
                }
            }
            guard !gone.isEmpty else { return deleted }
            state.events.replaceSubrange(0..<end, with: kept)
            for name in Array(state.cursors.keys) {
                guard let record = state.cursors[name], let lastGone = gone.last, lastGone.position > record.position
                else { continue }
                let first = gone.partitioningIndex { $0.position <= record.position }
                let lost =
                    record.partition == nil
                    ? gone.count - first : gone[first...].reduce(0) { $0 + (record.sees($1.hash) ? 1 : 0) }
                state.cursors[name]?.expired += lost
            }
            return deleted + gone.count
        }
    }

    /// Wakes `waker` at every append, every lease given up and every requeue of dead letters,
    /// until ``unregister(_:)``. O(1).
    ///
    /// ```swift
    /// store.register(waker)
    /// ```
    public func register(_ waker: DurableWaker) {
        state.withLock { $0.wakers[ObjectIdentifier(waker)] = waker }
    }

    /// Stops waking `waker`. O(1).
    ///
    /// ```swift
    /// store.unregister(waker)
    /// ```
    public func unregister(_ waker: DurableWaker) {
        state.withLock { $0.wakers[ObjectIdentifier(waker)] = nil }
    }

    /// How many events the store holds (deleted ones excluded). O(1).
    ///
    /// ```swift
    /// let deleted = try await store.cleanUp(DurableRetention())
    /// print(store.count, "events kept")
    /// ```
    public var count: Int {
        state.withLock { $0.events.count }
    }

    /// Wakes every registered waker (outside the lock).
    func wakeAll() {
        let wakers = state.withLock { Array($0.wakers.values) }
        for waker in wakers { waker.wake() }
    }
}
