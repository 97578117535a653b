/// `function`, callable from nonisolated code that runs on the main queue: for the handlers of a
/// main-actor chain, whose posts and requests only ever run there.
///
/// Checked in release builds too. unsafeBitCast: isolation is a compile-time attribute of a
/// synchronous function type (same representation and calling convention); as
/// `Subscription.callOnMainQueue`, it avoids `MainActor.assumeIsolated`, which traps on Linux when
/// the main queue is drained by a pool thread.
func onMainQueue<A, B>(_ function: @escaping @MainActor @Sendable (A) throws -> B) -> @Sendable (A) throws -> B {
    let nonisolated = unsafeBitCast(function, to: (@Sendable (A) throws -> B).self)
    return { argument in
        precondition(isOnMainQueue, "EventBus: a main-actor chain's handler called off the main queue")
        return try nonisolated(argument)
    }
}
