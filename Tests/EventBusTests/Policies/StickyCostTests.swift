import Dispatch
import Testing

@testable import EventBus

/// DESIGN §7: a `.last(n)` dispatch is O(1), and letting go of expired TTL events is bounded work
/// per operation; both counted, not timed. And the ring that keeps `.last(n)` against an array.
@Suite("Policies: sticky cost", .offThePool)
struct StickyCostTests {
    struct Message: Event, Equatable {
        var key: String? = nil
        let serial: Int
        var eventType: String? { key }
    }

    struct Ping: Event {
        var key: String? = nil
        var eventType: String? { key }
    }

    struct Lone: Event {}
    struct Other: Event {}

    /// The entries `Message`'s sticky store has written, moved or removed so far.
    private static func entriesMoved(on bus: EventBus) -> Int {
        bus.core.withRegistry { registry in registry.stickyStore(of: Message.self)?.entriesMoved } ?? 0
    }

    @Test(".last(n) moves a constant number of entries per dispatch, at n = 10 as at n = 10,000")
    func lastIsConstant() {
        var perDispatch: [Int: Double] = [:]
        for limit in [10, 10_000] {
            let bus = EventBus()
            for serial in 0..<limit { bus.dispatch(Message(serial: serial), sticky: .last(limit)) }
            let before = Self.entriesMoved(on: bus)
            let dispatches = 1_000
            for serial in 0..<dispatches { bus.dispatch(Message(serial: limit + serial), sticky: .last(limit)) }
            perDispatch[limit] = Double(Self.entriesMoved(on: bus) - before) / Double(dispatches)
            let kept = bus.stickyEvents(Message.self)
            #expect(kept.count == limit)
            #expect(kept.first?.serial == dispatches && kept.last?.serial == limit + dispatches - 1)
            #expect(bus.sticky(Message.self)?.serial == limit + dispatches - 1)
        }
        print(
            "last(n) cost: entries moved per dispatch at n = 10: \(perDispatch[10]!), at n = 10,000: \(perDispatch[10_000]!)"
        )
        #expect(perDispatch[10]! <= 2, "a full .last(10) dispatch should append one and drop one")
        #expect(perDispatch[10_000]! <= 2, "a full .last(10,000) dispatch should append one and drop one")
    }

    @Test(".last(Int.max) grows as events come (amortised O(1)); .last(0), .last(-1) and .last(Int.min) keep one")
    func extremeLimits() {
        let bus = EventBus()
        let count = 5_000
        for serial in 0..<count { bus.dispatch(Message(serial: serial), sticky: .last(Int.max)) }
        #expect(bus.stickyCount(of: Message.self) == count)
        // One written per dispatch, and fewer than `2 * count` moved in all by the doublings.
        #expect(Self.entriesMoved(on: bus) < 3 * count)
        #expect(bus.stickyEvents(Message.self).map(\.serial) == Array(0..<count))
        for (serial, limit) in [0, -1, Int.min].enumerated() {
            bus.dispatch(Message(serial: serial), sticky: .last(limit))
            #expect(bus.stickyEvents(Message.self) == [Message(serial: serial)], "last(\(limit))")
        }
        #expect(bus.stickyCount == 1)
    }

    @Test(
        "After 300,000 TTL events come due, one read lets go of a few, returns none of them, and operations drain the rest"
    )
    func expiryIsBounded() {
        let clock = ManualEventClock()
        let bus = EventBus(clock: clock)
        let due = 300_000
        for i in 0..<due { bus.dispatch(Ping(key: "\(i)"), sticky: .latest(ttl: .seconds(1))) }
        bus.dispatch(Lone(), sticky: .latest(ttl: .seconds(1)))
        bus.dispatch(Message(key: "fresh", serial: 1), sticky: .latest(ttl: .seconds(3600)))
        clock.advance(by: .seconds(2))
        let queued = bus.core.stickyExpiryCount
        #expect(queued == due + 2)

        // Each read lets go of a few due events at most (its own slot's among them), and never
        // returns an expired one, swept or not.
        let limit = 3
        var before = queued
        #expect(bus.sticky(Lone.self) == nil)
        #expect(
            before - bus.core.stickyExpiryCount <= limit, "one read let go of \(before - bus.core.stickyExpiryCount)")
        before = bus.core.stickyExpiryCount
        #expect(bus.stickyEvents(Ping.self, ofType: "123456").isEmpty)
        #expect(bus.takeSticky(Ping.self, ofType: "7") == nil)
        #expect(bus.removeSticky(Ping.self, ofType: "8") == 0)
        #expect(bus.sticky(Message.self, ofType: "fresh")?.serial == 1)
        #expect(before - bus.core.stickyExpiryCount <= 4 * limit)
        let got = Shared(0)
        // (A replay of every key walks every key of the type, expired ones let go of on the way.)
        let token = bus.on(Ping.self).ofType("9").replayingSticky().next { _ in got.withLock { $0 += 1 } }
        token.dispose()
        #expect(got.value == 0, "a replay returned an expired event")
        #expect(bus.core.stickyExpiryCount > due - 100, "the reads let go of more than a few each")

        // Every operation pays its share: dispatches of another type, and reads, drain the queue.
        let listener = bus.on(Other.self).next { _ in }
        var operations = 0
        while bus.core.stickyExpiryCount > 1 && operations < due {
            if operations.isMultiple(of: 2) { bus.dispatch(Other()) } else { _ = bus.sticky(Lone.self) }
            operations += 1
        }
        listener.dispose()
        #expect(operations <= due / Registry.expiriesPerOperation)
        print(
            "sticky expiry: \(due) due events, one read let go of at most \(limit); drained by \(operations) operations"
        )
        #expect(bus.core.stickyExpiryCount == 1, "the fresh event's item is left")
        #expect(bus.stickyCount == 1)
        #expect(bus.stickyCount(of: Ping.self) == 0)
    }

    @Test("stickyCount lets go of every due event first, in batches, and counts none of them")
    func countsDrain() {
        let clock = ManualEventClock()
        let bus = EventBus(clock: clock)
        for i in 0..<1_000 { bus.dispatch(Ping(key: "\(i)"), sticky: .latest(ttl: .seconds(1))) }
        bus.dispatch(Ping(key: "kept"), sticky: .latest)
        clock.advance(by: .seconds(2))
        #expect(bus.stickyCount(of: Ping.self) == 1)
        #expect(bus.core.stickyExpiryCount == 0)
        for i in 0..<1_000 { bus.dispatch(Ping(key: "\(i)"), sticky: .latest(ttl: .seconds(1))) }
        clock.advance(by: .seconds(2))
        #expect(bus.stickyCount == 1)
        #expect(bus.core.stickyExpiryCount == 0)
    }

    /// A kept event of the model: its serial, its deadline (`nil`: none), whether it is taken once.
    private struct Kept: Equatable {
        let serial: Int
        let deadline: UInt64?
        let takeOnce: Bool
    }

    @Test(
        "Random .last(n), .latest, TTL and .untilDelivered dispatches, takes, removals, reads and replays on 3 keys match an array model"
    )
    func ringMatchesModel() {
        var random = SplitMix64(seed: 0x51C4_7E11)
        let clock = ManualEventClock()
        let bus = EventBus(clock: clock)
        let keys: [String?] = [nil, "a", "b"]
        var model: [String?: [Kept]] = [:]
        var now: UInt64 = 0
        var serial = 0
        var counts = [String: Int]()
        let steps = 20_000
        for step in 0..<steps {
            let key = keys[random.next(below: keys.count)]
            // Expired events are invisible: the model forgets them at once.
            for (key, kept) in model {
                let live = kept.filter { $0.deadline.map { now < $0 } ?? true }
                model[key] = live.isEmpty ? nil : live
            }
            let operation = random.next(below: 16)
            switch operation {
            case 0..<6:
                // .last(n), n mostly small so that the ring wraps and shrinks, sometimes large.
                let limit = random.next(below: 8) == 0 ? random.next(below: 200) - 10 : random.next(below: 6)
                serial += 1
                bus.dispatch(Message(key: key, serial: serial), sticky: .last(limit))
                let kept = (model[key] ?? []) + [Kept(serial: serial, deadline: nil, takeOnce: false)]
                model[key] = Array(kept.suffix(Swift.max(1, limit)))
                counts["last", default: 0] += 1
            case 6:
                serial += 1
                bus.dispatch(Message(key: key, serial: serial), sticky: .latest)
                model[key] = [Kept(serial: serial, deadline: nil, takeOnce: false)]
                counts["latest", default: 0] += 1
            case 7:
                serial += 1
                let ttl = UInt64(random.next(below: 20))
                bus.dispatch(Message(key: key, serial: serial), sticky: .latest(ttl: .seconds(Int(ttl))))
                model[key] = [Kept(serial: serial, deadline: now + ttl * 1_000_000_000, takeOnce: false)]
                counts["ttl", default: 0] += 1
            case 8:
                serial += 1
                bus.dispatch(Message(key: key, serial: serial), sticky: .untilDelivered)  // nobody listens
                model[key] = [Kept(serial: serial, deadline: nil, takeOnce: true)]
                counts["untilDelivered", default: 0] += 1
            case 9:
                let taken = bus.takeSticky(Message.self, ofType: key)
                #expect(taken?.serial == model[key]?.last?.serial, "step \(step): take")
                model[key]?.removeLast()
                if model[key]?.isEmpty ?? false { model[key] = nil }
                counts["take", default: 0] += 1
            case 10:
                #expect(bus.removeSticky(Message.self, ofType: key) == model[key]?.count ?? 0, "step \(step): remove")
                model[key] = nil
                counts["remove", default: 0] += 1
            case 11:
                let replayed = Shared<[Int]>([])
                let maker = bus.on(Message.self)
                let replayedKeys: [String?]
                let token: EventToken
                if let key, random.next(below: 2) == 0 {
                    replayedKeys = [key]
                    token = maker.ofType(key).replayingSticky().next {
                        replayed.withLock { [serial = $0.serial] in $0.append(serial) }
                    }
                } else {
                    replayedKeys = keys
                    token = maker.replayingSticky().next {
                        replayed.withLock { [serial = $0.serial] in $0.append(serial) }
                    }
                }
                token.dispose()
                let expected = replayedKeys.flatMap { model[$0] ?? [] }.map(\.serial).sorted()
                #expect(replayed.value == expected, "step \(step): replay of \(replayedKeys)")
                for replayedKey in replayedKeys {
                    let left = model[replayedKey]?.filter { !$0.takeOnce }
                    model[replayedKey] = left?.isEmpty ?? true ? nil : left
                }
                counts["replay", default: 0] += 1
            case 12, 13:
                let seconds = random.next(below: 8)
                clock.advance(by: .seconds(seconds))
                now += UInt64(seconds) * 1_000_000_000
                counts["clock", default: 0] += 1
            default:
                #expect(bus.sticky(Message.self, ofType: key)?.serial == model[key]?.last?.serial, "step \(step)")
                #expect(
                    bus.stickyEvents(Message.self, ofType: key).map(\.serial) == (model[key] ?? []).map(\.serial),
                    "step \(step)")
                counts["read", default: 0] += 1
            }
            for (key, kept) in model {
                let live = kept.filter { $0.deadline.map { now < $0 } ?? true }
                model[key] = live.isEmpty ? nil : live
            }
            #expect(bus.stickyCount(of: Message.self) == model.values.reduce(0) { $0 + $1.count }, "step \(step)")
        }
        let summary = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        print("sticky ring model: \(steps) operations, \(summary)")
    }
}
