import Testing

@testable import EventBus

/// A tracer removed (or replaced) from inside one of its own calls gets no more records, even when
/// the operation that made that record ended several subscriptions in one critical section (a
/// purge's batch, a dispatch's chunk of dead owners).
@Suite("Tracing: a tracer that removes itself gets no more records", .offThePool)
struct TracerRemovalTests {
    struct Login: Event { let userID: String }
    final class Screen: Sendable {}

    /// Installs a tracer that counts the `.ended` records it gets and removes itself at the first.
    private static func installSelfRemovingTracer(on bus: EventBus) -> Shared<Int> {
        let ended = Shared(0)
        bus.tracer = { [weak bus] record in
            guard case .ended = record else { return }
            ended.increment()
            bus?.tracer = nil
        }
        return ended
    }

    @Test("a purge that reclaims three subscriptions at once: one record, then none")
    func purgeBatch() {
        let bus = EventBus()
        var screen: Screen? = Screen()
        for _ in 0..<3 { bus.on(Login.self).freeWith(screen).next { _, _ in } }
        let ended = Self.installSelfRemovingTracer(on: bus)
        screen = nil
        bus.purge()
        #expect(bus.subscriptionCount == 0)
        #expect(ended.value == 1, "the tracer was called \(ended.value) times after it removed itself at the first")
        #expect(bus.tracer == nil)
    }

    @Test("a dispatch whose chunk finds three owners gone: one record, then none")
    func dispatchChunk() {
        let bus = EventBus()
        var screen: Screen? = Screen()
        for _ in 0..<3 { bus.on(Login.self).freeWith(screen).next { _, _ in } }
        let ended = Self.installSelfRemovingTracer(on: bus)
        screen = nil
        bus.dispatch(Login(userID: "42"))
        #expect(bus.subscriptionCount == 0)
        #expect(ended.value == 1, "the tracer was called \(ended.value) times after it removed itself at the first")
    }
}
