internal import Foundation

extension InMemoryDurableStore: DurableDeadLetterStore {
    /// A dead letter as stored.
    struct DeadLetterRecord: Sendable {
        let id: Int64
        let consumer: String
        let eventID: Int64
        let wireName: String
        let envelope: String
        var attempts: Int
        var reason: String
        var deadAt: Date
        var requeuedAt: Date?
        /// The retries taken since it was last requeued (PostgreSQL's `requeue_attempts`).
        var requeueTries = 0

        /// The letter as listed.
        var letter: DurableDeadLetter {
            DurableDeadLetter(
                id: id, consumer: consumer, eventID: eventID, wireName: wireName, envelope: envelope,
                attempts: attempts, reason: reason, deadAt: deadAt, requeuedAt: requeuedAt)
        }

        /// Whether the letter is `consumer`'s or, if `consumer` names a group, one of its
        /// partitions' (`consumer#…`); every letter's for `nil`. Compared as UTF-8 bytes, as
        /// PostgreSQL's `=` and `starts_with` compare text.
        func isOf(_ filter: String?) -> Bool {
            guard let filter else { return true }
            let name = consumer.utf8
            let prefix = filter.utf8
            guard name.starts(with: prefix) else { return false }
            let rest = name.dropFirst(prefix.count)
            return rest.isEmpty || rest.first == UInt8(ascii: "#")
        }
    }

    /// Sets `event` aside as a dead letter of `consumer` after `attempts` failed tries, for
    /// `reason`, and returns its id: 1, 2, 3… in the order letters are set aside. The letter's
    /// ``DurableDeadLetter/eventID`` is the event's position, its ``DurableDeadLetter/deadAt`` the
    /// wall clock's now (`Date()`); it keeps a copy of the envelope, so retention
    /// (``cleanUp(_:)``) may delete the event. The letters live as long as the store. Any thread;
    /// amortized O(1) under the lock; never throws.
    ///
    /// ```swift
    /// let id = try await store.deadLetter(event, of: "billing#3", wireName: "order.placed", attempts: 3, reason: "\(error)")
    /// ```
    public func deadLetter(
        _ event: DurableEvent<Int64>, of consumer: String, wireName: String, attempts: Int, reason: String
    ) async throws -> Int64 {
        state.withLock { state in
            state.lastDeadLetterID += 1
            state.deadLetters.append(
                DeadLetterRecord(
                    id: state.lastDeadLetterID, consumer: consumer, eventID: event.position, wireName: wireName,
                    envelope: event.envelope, attempts: attempts, reason: reason, deadAt: Date()))
            return state.lastDeadLetterID
        }
    }

    /// The dead letters of `consumer` (exactly that name) and of its group's partitions' cursors
    /// (`consumer#index`; `nil`: of every consumer), with ids after `after`, oldest first, `limit`
    /// at most (none for a `limit` below 1): PostgreSQL's selection. Names are compared as UTF-8
    /// bytes. O(log l + k) under the lock for `l` letters kept and `k` letters stepped over (those
    /// after `after` until `limit` match: at most `l`). Any thread; never throws.
    ///
    /// ```swift
    /// for letter in try await store.deadLetters(of: "billing", after: 0, limit: 100) {
    ///     print(letter.consumer, letter.attempts, letter.reason)   // billing#0, billing#7…
    /// }
    /// ```
    public func deadLetters(of consumer: String?, after: Int64, limit: Int) async throws -> [DurableDeadLetter] {
        guard limit > 0 else { return [] }
        return state.withLock { state in
            var letters: [DurableDeadLetter] = []
            var index = state.firstDeadLetterIndex { $0 <= after }
            while index < state.deadLetters.count, letters.count < limit {
                let record = state.deadLetters[index]
                if record.isOf(consumer) { letters.append(record.letter) }
                index += 1
            }
            return letters
        }
    }

    /// Marks dead letter `id` (`nil`: every one of `consumer` and its group's partitions, as
    /// ``deadLetters(of:after:limit:)`` selects them; both `nil`: every one) requeued now
    /// (``DurableDeadLetter/requeuedAt``) unless it already is; an `id` with a `consumer` marks the
    /// letter only if it is that consumer's. Returns how many letters it marked and, if any, wakes
    /// every registered waker (after the lock is released), so that the consumer's reader tries
    /// them, on the calling thread. O(log l) under the lock for an `id`, O(l) otherwise, for `l`
    /// letters kept, plus the wakers. Any thread; never throws.
    ///
    /// ```swift
    /// let marked = try await store.requeueDeadLetters(nil, of: "billing")   // billing's and billing#n's
    /// ```
    public func requeueDeadLetters(_ id: Int64?, of consumer: String?) async throws -> Int {
        let (marked, wakers) = state.withLock { state -> (Int, [DurableWaker]) in
            let now = Date()
            let range: Range<Int>
            if let id {
                let index = state.firstDeadLetterIndex { $0 < id }
                let found = index < state.deadLetters.count && state.deadLetters[index].id == id
                range = found ? index..<index + 1 : index..<index
            } else {
                range = state.deadLetters.indices
            }
            var marked = 0
            for index in range where state.deadLetters[index].requeuedAt == nil {
                guard state.deadLetters[index].isOf(consumer) else { continue }
                state.deadLetters[index].requeuedAt = now
                state.deadLetters[index].requeueTries = 0
                marked += 1
            }
            return (marked, marked > 0 ? Array(state.wakers.values) : [])
        }
        for waker in wakers { waker.wake() }
        return marked
    }

    // MARK: A requeued letter's retry (for a transport; PostgreSQL's `retryRequeued`)

    /// The oldest requeued dead letter of `consumer` (that name exactly: a partition's holder takes
    /// its own), with its retry counted first, and how many retries it had since it was requeued,
    /// this one included (a transport gives up past its maximum, as PostgreSQL does); `nil` when
    /// there is none, or when `owner` does not hold the lease of `consumer` with `epoch`. O(l)
    /// under the lock.
    func takeRequeuedDeadLetter(of consumer: String, owner: UUID, epoch: Int64) -> (
        letter: DurableDeadLetter, tries: Int
    )? {
        state.withLock { state in
            guard state.holds(consumer, owner: owner, epoch: epoch),
                let index = state.deadLetters.firstIndex(where: { $0.requeuedAt != nil && $0.consumer == consumer })
            else { return nil }
            state.deadLetters[index].requeueTries += 1
            return (state.deadLetters[index].letter, state.deadLetters[index].requeueTries)
        }
    }

    /// Ends the retry of dead letter `id` of `consumer`, fenced by the lease of `owner` and
    /// `epoch`: deletes it when `failure` is `nil` (the handler succeeded), or sets it aside again
    /// (`failure`'s attempts added, its reason, dead now, no longer requeued). Returns whether the
    /// letter was there. O(l) under the lock.
    ///
    /// - Throws: ``DurableStoreError/leaseLost(consumer:)`` if `owner` does not hold the lease
    ///   with `epoch` (nothing changed).
    func settleRequeuedDeadLetter(
        _ id: Int64, of consumer: String, owner: UUID, epoch: Int64, failure: (attempts: Int, reason: String)?
    ) throws -> Bool {
        try state.withLock { state in
            guard state.holds(consumer, owner: owner, epoch: epoch) else {
                throw DurableStoreError.leaseLost(consumer: consumer)
            }
            let index = state.firstDeadLetterIndex { $0 < id }
            guard index < state.deadLetters.count, state.deadLetters[index].id == id,
                state.deadLetters[index].consumer == consumer
            else { return false }
            if let failure {
                state.deadLetters[index].attempts += failure.attempts
                state.deadLetters[index].reason = failure.reason
                state.deadLetters[index].deadAt = Date()
                state.deadLetters[index].requeuedAt = nil
            } else {
                state.deadLetters.remove(at: index)
            }
            return true
        }
    }
}

extension InMemoryDurableStore.State {
    /// The index of the first dead letter whose id is not `before` (ids only grow): O(log l).
    func firstDeadLetterIndex(_ before: (Int64) -> Bool) -> Int {
        deadLetters.partitioningIndex { before($0.id) }
    }
}
