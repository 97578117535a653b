/// The outcome of one queued publish, which its caller awaits: completed once, by the serial
/// publisher or by the publish's timeout (whichever comes first), before or after the caller
/// starts waiting.
final class PublishTicket: Sendable {
    private enum State {
        case pending(CheckedContinuation<Void, any Error>?)
        case done(Result<Void, any Error>)
    }

    private let state = Locked(State.pending(nil))

    /// Records the outcome and resumes the waiter, if any (after unlocking); returns false, and
    /// does nothing, if the ticket was already completed.
    @discardableResult
    func complete(_ result: Result<Void, any Error>) -> Bool {
        let (completed, waiter): (Bool, CheckedContinuation<Void, any Error>?) = state.withLock { state in
            guard case .pending(let waiter) = state else { return (false, nil) }
            state = .done(result)
            return (true, waiter)
        }
        waiter?.resume(with: result)
        return completed
    }

    /// Whether the outcome is recorded (sent, failed or timed out).
    var isDone: Bool {
        state.withLock { state in
            if case .done = state { true } else { false }
        }
    }

    /// Returns when the publish has been sent; throws its error if it failed.
    func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome: Result<Void, any Error>? = state.withLock { state in
                switch state {
                case .pending:
                    state = .pending(continuation)
                    return nil
                case .done(let result):
                    return result
                }
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}
