/// Runs `operation` in a task of its own and returns its result, or throws
/// `RemoteBridgeError.publishTimedOut(after: timeout)` if it has not finished after `timeout`:
/// then the operation's task is cancelled and left to end on its own (an operation that ignores
/// cancellation, as a pool waiting for a connection may, cannot hold the caller).
func withDeadline(
    _ timeout: Duration, _ operation: @escaping @Sendable () async throws -> Void
) async throws {
    let (outcomes, outcome) = AsyncStream<Result<Void, any Error>>.makeStream()
    let work = Task {
        do {
            try await operation()
            outcome.yield(.success(()))
        } catch {
            outcome.yield(.failure(error))
        }
    }
    let timer = Task {
        try await Task.sleep(for: timeout)
        outcome.yield(.failure(RemoteBridgeError.publishTimedOut(after: timeout)))
    }
    defer {
        timer.cancel()
        work.cancel()
    }
    for await first in outcomes { return try first.get() }
}
