public import Foundation

extension InMemoryDurableStore: DurableScheduleStore {
    /// A scheduled event as stored.
    struct ScheduledRecord: Sendable {
        let pending: RemoteBridge.PendingEvent
        let due: Date
        var state: ScheduledState = .pending
        /// When it fired, was cancelled or refused.
        var decidedAt: Date?
    }

    enum ScheduledState: Sendable, Equatable {
        case pending
        /// Taken by a firing pass that has not appended it yet (between the pass's two steps).
        case firing
        case fired
        case cancelled
        case refused(String)
    }

    /// Stores `event` under `id`, due `due` by the wall clock (`Date`): after a delay from now, or
    /// at a date. O(log s) for `s` scheduled events.
    ///
    /// - Throws: ``DurableStoreError/scheduledEventExists(_:)`` if `id` is scheduled already
    ///   (nothing changed).
    ///
    /// ```swift
    /// let scheduler = DurableScheduler(store: store, bridge: bridge, channel: "orders")
    /// let id = try await scheduler.publish(PaymentDue(orderID: 7), after: .seconds(60))   // calls this
    /// ```
    public func schedule(_ event: RemoteBridge.PendingEvent, id: UUID, due: DurableDue) async throws {
        let time: Date
        switch due {
        case .after(let delay): time = Date().addingTimeInterval(Self.seconds(delay))
        case .at(let date): time = date
        }
        try state.withLock { state in
            guard state.scheduled[id] == nil else { throw DurableStoreError.scheduledEventExists(id) }
            state.scheduled[id] = ScheduledRecord(pending: event, due: time)
            state.scheduledCount += 1
            state.dueQueue.add(DueQueue.Entry(due: time, order: state.scheduledCount, id: id))
        }
    }

    /// Cancels the scheduled event `id` if it is pending; otherwise says who won (it fired, was
    /// refused, was cancelled already, or is unknown: never scheduled, or forgotten by
    /// ``cleanUp(_:)`` after ``scheduleRetention``). A cancel that meets a firing pass between its
    /// two steps waits for it (microseconds: the pass does not suspend there). O(1).
    ///
    /// ```swift
    /// if try await store.cancelScheduled(id) == .cancelled { print("never delivered") }
    /// ```
    public func cancelScheduled(_ id: UUID) async throws -> ScheduledEventCancellation {
        while true {
            let found: ScheduledEventCancellation? = state.withLock { state in
                guard let record = state.scheduled[id] else { return .unknown }
                switch record.state {
                case .pending:
                    state.scheduled[id]?.state = .cancelled
                    state.scheduled[id]?.decidedAt = Date()
                    return .cancelled
                case .firing: return nil
                case .fired: return .alreadyFired
                case .cancelled: return .alreadyCancelled
                case .refused(let reason): return .refused(reason: reason)
                }
            }
            if let found { return found }
            await Task.yield()
        }
    }

    /// One firing pass: takes up to `limit` pending events due by the wall clock plus
    /// `lookingAhead`, in due order (ties in scheduling order), seals each with `seal` outside the
    /// lock, then appends the envelopes in one atomic write (waking the registered wakers) and
    /// marks the events fired, or refused with the reason `seal` threw. Returns how many events it
    /// took. Passes running at once take disjoint events: each fires once. O(k log s) for `k`
    /// events taken of `s` scheduled (plus the cancelled ones it skips), and the append's cost.
    ///
    /// ```swift
    /// let fired = try await DurableScheduler(store: store, bridge: bridge, channel: "orders").fireDue()
    /// ```
    public func fireDue(
        lookingAhead: Duration, limit: Int, seal: @escaping @Sendable (DurableDueEvent) throws -> String
    ) async throws -> Int {
        let horizon = Date().addingTimeInterval(Self.seconds(lookingAhead))
        let due: [DurableDueEvent] = state.withLock { state in
            var due: [DurableDueEvent] = []
            while due.count < limit, let first = state.dueQueue.first, first.due <= horizon {
                state.dueQueue.removeFirst()
                guard let record = state.scheduled[first.id], record.state == .pending else { continue }
                state.scheduled[first.id]?.state = .firing
                due.append(DurableDueEvent(id: first.id, pending: record.pending))
            }
            return due
        }
        guard !due.isEmpty else { return 0 }
        // Sealing is the bridge's code (its MAC, its reports): outside the lock. Nothing suspends
        // between the two steps, so a pass never leaves an event taken and not decided.
        var envelopes: [String] = []
        var outcomes: [(UUID, ScheduledState)] = []
        for event in due {
            do {
                envelopes.append(try seal(event))
                outcomes.append((event.id, .fired))
            } catch {
                outcomes.append((event.id, .refused("\(error)")))
            }
        }
        let hashes = envelopes.map(RemoteBridge.orderingHash(ofEnvelope:))
        let wakers = state.withLock { state in
            let now = Date()
            for (id, outcome) in outcomes {
                state.scheduled[id]?.state = outcome
                state.scheduled[id]?.decidedAt = now
            }
            let appendedAt = ContinuousClock.now
            for (envelope, hash) in zip(envelopes, hashes) {
                state.lastPosition += 1
                state.events.append(
                    Stored(position: state.lastPosition, envelope: envelope, hash: hash, appendedAt: appendedAt))
            }
            return envelopes.isEmpty ? [] : Array(state.wakers.values)
        }
        for waker in wakers { waker.wake() }
        return due.count
    }

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
