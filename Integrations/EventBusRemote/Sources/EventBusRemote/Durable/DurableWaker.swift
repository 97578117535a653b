/// Wakes a durable reader: a store's signal that events were appended (PostgreSQL: a `NOTIFY`), or
/// its poll interval, whichever comes first. A wake-up with nobody waiting is kept for the next
/// wait (one at most).
///
/// Runs on any thread; the waiting task resumes on the cooperative pool.
///
/// ```swift
/// let waker = DurableWaker()
/// Task { await waker.wait(atMost: .seconds(1)) }
/// waker.wake()
/// ```
public final class DurableWaker: Sendable {
    private let state = Locked<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    /// A waker with no wake-up pending.
    public init() {}

    /// Ends the current wait, or the next one.
    public func wake() {
        let waiter = state.withLock { state in
            defer { state = (state.waiter == nil, nil) }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns at the next wake-up, after `limit`, or when the task is cancelled.
    public func wait(atMost limit: Duration) async {
        let timer = Task { [weak self] in
            try await Task.sleep(for: limit)
            self?.wake()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            wake()
        }
    }
}
