import Dispatch
import Testing

@testable import EventBus

/// `.latest(ttl:)`: the expiry queue holds one item per key with a TTL event kept, not one per
/// dispatch, and the sweep still lets each event go at its own deadline.
@Suite("Policies: sticky expiry queue", .offThePool)
struct StickyExpiryQueueTests {
    struct Ping: Event {
        var key: String? = nil
        var eventType: String? { key }
    }

    final class Payload: @unchecked Sendable {
        let released: Shared<Bool>
        init(_ released: Shared<Bool>) { self.released = released }
        deinit { released.withLock { $0 = true } }
    }

    struct Carrier: Event {
        let payload: Payload
    }

    @Test("Replacing a TTL event 100,000 times leaves one item queued; removing or taking it leaves none")
    func oneItemPerKey() {
        let clock = ManualEventClock()
        let bus = EventBus(clock: clock)
        for _ in 0..<100_000 { bus.dispatch(Ping(), sticky: .latest(ttl: .seconds(3600))) }
        #expect(bus.stickyCount == 1)
        #expect(bus.core.stickyExpiryCount == 1)
        #expect(bus.removeSticky(Ping.self) == 1)
        #expect(bus.core.stickyExpiryCount == 0)

        // Keys used once each (request ids, say), removed or taken soon after.
        for i in 0..<10_000 {
            bus.dispatch(Ping(key: "\(i)"), sticky: .latest(ttl: .seconds(3600)))
            if i.isMultiple(of: 2) {
                bus.removeSticky(Ping.self, ofType: "\(i)")
            } else {
                _ = bus.takeSticky(Ping.self, ofType: "\(i)")
            }
        }
        #expect(bus.stickyCount == 0)
        #expect(bus.core.stickyExpiryCount == 0)
    }

    @Test("An event without a TTL that replaces one with a TTL, or pushes it out of .last(n), leaves no item")
    func replacedByNoTTL() {
        let clock = ManualEventClock()
        let bus = EventBus(clock: clock)
        bus.dispatch(Ping(key: "a"), sticky: .latest(ttl: .seconds(1)))
        bus.dispatch(Ping(key: "a"), sticky: .latest)
        bus.dispatch(Ping(key: "b"), sticky: .latest(ttl: .seconds(1)))
        bus.dispatch(Ping(key: "b"), sticky: .untilDelivered)
        bus.dispatch(Ping(key: "c"), sticky: .latest(ttl: .seconds(1)))
        bus.dispatch(Ping(key: "c"), sticky: .last(2))
        #expect(bus.core.stickyExpiryCount == 1, "c's TTL event is still one of its last 2")
        bus.dispatch(Ping(key: "c"), sticky: .last(2))
        #expect(bus.core.stickyExpiryCount == 0)
        bus.dispatch(Ping(key: "d"), sticky: .latest(ttl: .seconds(1)))
        bus.removeAllSticky()
        #expect(bus.core.stickyExpiryCount == 0)
        #expect(bus.stickyCount == 0)
    }

    @Test("Expired events leave the queue, whether let go of by a read or by the sweep")
    func expiredLeave() {
        let clock = ManualEventClock()
        let bus = EventBus(clock: clock)
        for i in 0..<1_000 { bus.dispatch(Ping(key: "\(i % 10)"), sticky: .latest(ttl: .seconds(3600))) }
        #expect(bus.core.stickyExpiryCount == 10)
        clock.advance(by: .seconds(7200))
        #expect(bus.stickyCount == 0)
        #expect(bus.core.stickyExpiryCount == 0)

        bus.dispatch(Ping(key: "x"), sticky: .latest(ttl: .seconds(1)))
        clock.advance(by: .seconds(2))
        #expect(bus.sticky(Ping.self, ofType: "x") == nil)
        #expect(bus.core.stickyExpiryCount == 0)
    }

    @Test("A replaced TTL event is let go of by the sweep at its own deadline, later or earlier than the first")
    func replacedDeadline() {
        let clock = ManualEventClock()
        let bus = EventBus(clock: clock)
        let first = Shared(false)
        let second = Shared(false)
        bus.dispatch(Carrier(payload: Payload(first)), sticky: .latest(ttl: .seconds(10)))
        clock.advance(by: .seconds(5))
        bus.dispatch(Carrier(payload: Payload(second)), sticky: .latest(ttl: .seconds(10)))  // due at 15
        #expect(first.value, "the replaced event is let go of at once")
        clock.advance(by: .seconds(6))  // 11: the first deadline has passed, not the second
        for _ in 0..<8 { bus.dispatch(Ping()) }
        #expect(!second.value, "let go of at the replaced event's deadline")
        #expect(bus.core.stickyExpiryCount == 1)
        clock.advance(by: .seconds(4))  // 15
        for _ in 0..<8 { bus.dispatch(Ping()) }
        #expect(second.value, "not let go of by the sweep at its deadline")
        #expect(bus.core.stickyExpiryCount == 0)

        // An earlier deadline than the one queued.
        let long = Shared(false)
        let short = Shared(false)
        bus.dispatch(Carrier(payload: Payload(long)), sticky: .latest(ttl: .seconds(3600)))
        bus.dispatch(Carrier(payload: Payload(short)), sticky: .latest(ttl: .seconds(1)))
        clock.advance(by: .seconds(2))
        for _ in 0..<8 { bus.dispatch(Ping()) }
        #expect(long.value)
        #expect(short.value, "the shorter TTL was not let go of by the sweep at its deadline")
        #expect(bus.core.stickyExpiryCount == 0)
    }

    @Test("Random dispatches, removals, takes and clock steps on 20 keys: one item per key with a TTL event")
    func randomOperations() {
        var random = SplitMix64(seed: 0x5EED)
        let clock = ManualEventClock()
        let bus = EventBus(clock: clock)
        // The model: per key, the kept events' deadlines (nil: none), oldest first.
        var model: [String: [UInt64?]] = [:]
        var now: UInt64 = 0
        for step in 0..<20_000 {
            let key = "\(random.next() % 20)"
            switch random.next() % 8 {
            case 0, 1, 2:
                let ttl = random.next() % 100
                bus.dispatch(Ping(key: key), sticky: .latest(ttl: .seconds(Int(ttl))))
                model[key] = [now + ttl * 1_000_000_000]
            case 3:
                bus.dispatch(Ping(key: key), sticky: .latest)
                model[key] = [nil]
            case 4:
                bus.dispatch(Ping(key: key), sticky: .last(2))
                model[key] = Array(((model[key] ?? []) + [nil]).suffix(2))
            case 5:
                bus.removeSticky(Ping.self, ofType: key)
                model[key] = nil
            case 6:
                _ = bus.takeSticky(Ping.self, ofType: key)
                model[key] = model[key].map { $0.filter { $0.map { now < $0 } ?? true }.dropLast() }
            default:
                let seconds = random.next() % 30
                clock.advance(by: .seconds(Int(seconds)))
                now += seconds * 1_000_000_000
            }
            for (key, deadlines) in model {
                let live = deadlines.filter { $0.map { now < $0 } ?? true }
                model[key] = live.isEmpty ? nil : live
            }
            #expect(bus.stickyCount == model.values.reduce(0) { $0 + $1.count }, "step \(step)")
            let withTTL = model.values.filter { $0.contains { $0 != nil } }.count
            #expect(bus.core.stickyExpiryCount == withTTL, "step \(step)")
        }
    }
}
