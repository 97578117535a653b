import Testing

@testable import EventBus  // `bus.index`'s and the bag's storage sizes

/// Memory comes back after a peak (DESIGN §5: "keyed maps, slot pages and
/// bags shrink with bounded work per operation (a progressive rehash into a smaller table), never
/// one O(N) pause").
///
/// Structural, not resident memory (that is `MemoryTests`, run alone): the tests count the slots
/// of the tables and the pages that are left once the peak is gone.
@Suite("Memory comes back after a peak: key tables, slot pages and bags shrink", .offThePool)
struct MemoryReturnTests {
    struct Keyed: Event {
        var key: String
        var eventType: String? { key }
    }
    struct Plain: Event {}

    /// What "back to small" means: a few dozen slots, whatever the peak was.
    static let smallTable = 64

    @Test("200,000 keys subscribed then disposed, one kept: the bucket's table of keys is back to a few dozen slots")
    func keyTableShrinks() {
        let bus = EventBus()
        let received = Shared(0)
        let kept = bus.on(Keyed.self).ofType("kept").next { _ in received.increment() }
        let keys = 200_000
        let tokens = (0..<keys).map { i in bus.on(Keyed.self).ofType("k\(i)").next { _ in received.increment() } }
        let peak = bus.core.keyedCapacity(ofTypeID: ObjectIdentifier(Keyed.self))
        // Half of them gone: those left are still found (the table may be resizing).
        for token in tokens[..<(keys / 2)] { token.dispose() }
        bus.dispatch(Keyed(key: "k\(keys - 1)"))
        bus.dispatch(Keyed(key: "k0"))
        #expect(received.value == 1)
        for token in tokens[(keys / 2)...] { token.dispose() }
        // Some further operations on the bucket's keys.
        for _ in 0..<1_000 { bus.on(Keyed.self).ofType("again").next { _ in }.dispose() }
        let after = bus.core.keyedCapacity(ofTypeID: ObjectIdentifier(Keyed.self))
        #expect(after <= Self.smallTable, "the table of keys has \(after) slots for 1 key (\(peak) at the peak)")
        bus.dispatch(Keyed(key: "kept"))
        bus.dispatch(Keyed(key: "k7"))
        #expect(received.value == 2)
        #expect(bus.subscriptionCount == 1)
        print(
            "Memory: \(keys) keys subscribed then disposed, 1 kept: table of keys \(peak) slots at the peak, \(after) after"
        )
        kept.dispose()
    }

    @Test("300,000 subscriptions disposed but the first and the last: the slot table is back to a few pages")
    func slotPagesAreFreed() {
        let bus = EventBus()
        let count = 300_000
        var tokens = (0..<count).map { _ in bus.on(Plain.self).next { _ in } }
        let peak = bus.core.slotPageCount
        let first = tokens.removeFirst()
        let last = tokens.removeLast()
        for token in tokens { token.dispose() }
        // Some further operations: new subscriptions take the lowest free slots.
        for _ in 0..<1_000 { bus.on(Plain.self).next { _ in }.dispose() }
        let after = bus.core.slotPageCount
        #expect(after <= 3, "\(after) pages of slots for 2 subscriptions (\(peak) at the peak)")
        let received = Shared(0)
        let late = bus.on(Plain.self).next { _ in received.increment() }
        bus.dispatch(Plain())
        #expect(received.value == 1)
        #expect(bus.subscriptionCount == 3)
        print("Memory: \(count) subscriptions, all but 2 disposed: \(peak) pages of slots at the peak, \(after) after")
        for token in [first, last, late] { token.dispose() }
        #expect(bus.subscriptionCount == 0)
    }

    @Test("a bag that held 100,000 tokens, disposed directly: its storage is back to a few dozen entries")
    func bagShrinks() {
        let bus = EventBus()
        let bag = DisposeBag()
        let tokens = (0..<100_000).map { _ in bus.on(Plain.self).next { _ in } }
        for token in tokens { bag.insert(token) }
        let peak = bag.capacity
        for token in tokens { token.dispose() }
        for _ in 0..<1_000 {
            let token = bus.on(Plain.self).next { _ in }
            bag.insert(token)
            token.dispose()
        }
        let after = bag.capacity
        #expect(bag.count == 0)
        #expect(after <= Self.smallTable, "the bag has room for \(after) tokens, holding none (\(peak) at the peak)")
        print("Memory: a bag of 100,000 tokens disposed directly: room for \(peak) at the peak, \(after) after")
    }
}
