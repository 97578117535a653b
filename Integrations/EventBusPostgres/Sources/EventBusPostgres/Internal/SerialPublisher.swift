import NIOConcurrencyHelpers

/// One bridge's publishes, sent one batch at a time in the order they were admitted, so that an
/// instance's events reach every receiver in publish order.
///
/// A publish is admitted under the lock (sequence number, size and capacity checks, queued); the
/// first publish that finds no drain running starts one, which sends batches until the queue is
/// empty. Nothing but this type's own code runs under the lock.
final class SerialPublisher: Sendable {
    struct Job: Sendable {
        let wireName: String
        let sequence: UInt64
        let envelope: String
        let ticket: PublishTicket
    }

    enum Admission {
        case admitted(PublishTicket, startsDrain: Bool)
        case refused(PostgresEventBridgeError, bytes: Int)
    }

    private struct State {
        var queue: [Job] = []
        var draining = false
        var nextSequence: UInt64 = 1
    }

    private let state = NIOLockedValueBox(State())
    let capacity: Int
    /// How many queued publishes one NOTIFY statement carries at most.
    let batchSize = 32

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Takes the next sequence number, for a publish that does not go through the queue.
    func takeSequence() -> UInt64 {
        state.withLockedValue { state in
            defer { state.nextSequence += 1 }
            return state.nextSequence
        }
    }

    /// Queues the envelope that `build` makes with the next sequence number, unless it is too large
    /// or the queue is full.
    func admit(wireName: String, build: (UInt64) -> String) -> Admission {
        state.withLockedValue { state in
            let envelope = build(state.nextSequence)
            let bytes = envelope.utf8.count
            if bytes > PostgresEventBridge.maximumPayloadBytes {
                return .refused(.payloadTooLarge(bytes: bytes), bytes: bytes)
            }
            if state.queue.count >= capacity {
                return .refused(.publishBufferFull(capacity: capacity), bytes: bytes)
            }
            let ticket = PublishTicket()
            state.queue.append(
                Job(wireName: wireName, sequence: state.nextSequence, envelope: envelope, ticket: ticket))
            state.nextSequence += 1
            let startsDrain = !state.draining
            state.draining = true
            return .admitted(ticket, startsDrain: startsDrain)
        }
    }

    /// Sends the queue, batch by batch, until it is empty; `send` sends one batch in one statement.
    /// A failed batch completes its tickets with the error and is reported through `failed`.
    func drain(
        send: @Sendable ([Job]) async throws -> Void,
        failed: @Sendable (Job, any Error) -> Void
    ) async {
        while true {
            let batch: [Job] = state.withLockedValue { state in
                if state.queue.isEmpty {
                    state.draining = false
                    return []
                }
                let count = min(batchSize, state.queue.count)
                defer { state.queue.removeFirst(count) }
                return Array(state.queue.prefix(count))
            }
            if batch.isEmpty { return }
            do {
                try await send(batch)
                for job in batch { job.ticket.complete(.success(())) }
            } catch {
                for job in batch {
                    failed(job, error)
                    job.ticket.complete(.failure(error))
                }
            }
        }
    }
}
