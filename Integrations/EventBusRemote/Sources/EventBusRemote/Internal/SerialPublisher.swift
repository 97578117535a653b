/// One bridge's publishes, sent one batch at a time in the order they were admitted, so that an
/// instance's events reach every receiver in publish order; and the record of what it sent.
///
/// A publish is admitted under the lock (sequence number, size and capacity checks, queued,
/// recorded in the ``SentLog``); the first publish that finds no drain running starts one, which
/// sends batches until the queue is empty. A job whose ticket timed out while queued is skipped (so
/// never sent); a send that takes longer than the timeout is abandoned. Nothing but this type's own
/// code runs under the lock.
final class SerialPublisher: Sendable {
    struct Job: Sendable {
        let wireName: String
        let sequence: UInt64
        let envelope: String
        let ticket: PublishTicket
    }

    enum Admission {
        case admitted(Job, startsDrain: Bool)
        case refused(RemoteBridgeError, bytes: Int)
    }

    private struct State {
        var queue: [Job] = []
        var draining = false
        var nextSequence: UInt64 = 1
        var nextTransactionalSequence: UInt64 = 1
        var sent: SentLog
        /// When the first send of the current stall was abandoned; `nil` while sends succeed.
        var stalledSince: ContinuousClock.Instant?
    }

    private let state: Locked<State>
    let capacity: Int
    let maximumBytes: Int
    /// How many queued publishes one send carries at most.
    let batchSize = 32

    init(capacity: Int, maximumBytes: Int) {
        self.capacity = capacity
        self.maximumBytes = maximumBytes
        // Room for a full queue and as many sent envelopes whose echo has not come back yet.
        state = Locked(State(sent: SentLog(capacity: max(4096, 2 * capacity))))
    }

    /// Makes the envelope `build` returns with the next transactional sequence number, for a
    /// publish that does not go through the queue, and records it; `nil` with its size if too large.
    func transactional(build: (UInt64) -> String) -> (envelope: String?, bytes: Int) {
        state.withLock { state in
            let sequence = state.nextTransactionalSequence
            let envelope = build(sequence)
            let bytes = envelope.utf8.count
            guard bytes <= maximumBytes else { return (nil, bytes) }
            state.nextTransactionalSequence += 1
            state.sent.record(transactional: true, sequence: sequence, digest: Authenticator.digest(envelope))
            return (envelope, bytes)
        }
    }

    /// Queues the envelope that `build` makes with the next sequence number, unless it is too large
    /// or the queue is full.
    func admit(wireName: String, build: (UInt64) -> String) -> Admission {
        state.withLock { state in
            let envelope = build(state.nextSequence)
            let bytes = envelope.utf8.count
            if bytes > maximumBytes {
                return .refused(.payloadTooLarge(bytes: bytes, limit: maximumBytes), bytes: bytes)
            }
            if state.queue.count >= capacity {
                return .refused(.publishBufferFull(capacity: capacity), bytes: bytes)
            }
            let job = Job(wireName: wireName, sequence: state.nextSequence, envelope: envelope, ticket: PublishTicket())
            state.queue.append(job)
            state.sent.record(
                transactional: false, sequence: state.nextSequence, digest: Authenticator.digest(envelope))
            state.nextSequence += 1
            let startsDrain = !state.draining
            state.draining = true
            return .admitted(job, startsDrain: startsDrain)
        }
    }

    /// Classifies an envelope that claims this instance's origin (``SentLog/echo(of:)``).
    /// Whether this publisher has numbered `envelope`'s sequence in its series (sent it, or tried
    /// to): for an echo older than what the sent log keeps.
    func hasSent(_ envelope: Envelope.Received) -> Bool {
        state.withLock { state in
            let next = envelope.stream.transactional ? state.nextTransactionalSequence : state.nextSequence
            return envelope.sequence > 0 && envelope.sequence < next
        }
    }

    func echo(of envelope: Envelope.Received) -> SentLog.Echo {
        state.withLock { $0.sent.echo(of: envelope) }
    }

    /// How many publishes are queued.
    var waiting: Int { state.withLock { $0.queue.count } }

    /// Sends the queue, batch by batch, until it is empty; `send` sends one batch at once, and is
    /// abandoned (its task cancelled) after `timeout`, which `stalled` is told. Jobs whose ticket is
    /// already completed (timed out while queued) are not sent. A failed batch completes its
    /// tickets with the error, each reported through `failed` (unless its timeout already was).
    /// The first batch sent after a stall tells `recovered` how long since the first abandoned send.
    func drain(
        timeout: Duration,
        send: @escaping @Sendable ([String]) async throws -> Void,
        failed: @Sendable (Job, any Error) -> Void,
        stalled: @Sendable () -> Void,
        recovered: @Sendable (Duration) -> Void
    ) async {
        while true {
            let taken: [Job] = state.withLock { state in
                if state.queue.isEmpty {
                    state.draining = false
                    return []
                }
                let count = min(batchSize, state.queue.count)
                defer { state.queue.removeFirst(count) }
                return Array(state.queue.prefix(count))
            }
            if taken.isEmpty { return }
            let batch = taken.filter { !$0.ticket.isDone }
            if batch.isEmpty { continue }
            let payloads = batch.map(\.envelope)
            do {
                try await withDeadline(timeout) { try await send(payloads) }
                for job in batch { job.ticket.complete(.success(())) }
                let since = state.withLock { state in
                    defer { state.stalledSince = nil }
                    return state.stalledSince
                }
                if let since { recovered(since.duration(to: .now)) }
            } catch {
                if case .publishTimedOut = error as? RemoteBridgeError {
                    state.withLock { $0.stalledSince = $0.stalledSince ?? .now }
                    stalled()
                }
                for job in batch where job.ticket.complete(.failure(error)) {
                    failed(job, error)
                }
            }
        }
    }
}
