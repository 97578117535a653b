import Dispatch
import EventBus
import Testing

/// DESIGN §7: sticky events per type and key.
@Suite("Policies: sticky events", .tags(.stress), .offThePool)
struct StickyEventTests {
    struct User: Event, Equatable {
        let name: String
        var room: String? = nil
        var eventType: String? { room }
    }

    @Test(".latest keeps one per type and key; a replaying subscriber gets it before next returns, then live ones")
    func latestAndReplay() {
        let bus = EventBus()
        bus.dispatch(User(name: "a"), sticky: .latest)
        bus.dispatch(User(name: "b"), sticky: .latest)
        bus.dispatch(User(name: "r", room: "7"), sticky: .latest)
        let got = Shared<[String]>([])
        _ = bus.on(User.self).replayingSticky().next { got.append($0.name) }
        #expect(got.value == ["b", "r"])  // every key, in dispatch order
        bus.dispatch(User(name: "c"))
        #expect(got.value == ["b", "r", "c"])
        #expect(bus.sticky(User.self) == User(name: "b"))  // a plain dispatch is not kept
        #expect(bus.sticky(User.self, ofType: "7")?.name == "r")
        #expect(bus.stickyCount == 2)
        #expect(bus.stickyCount(of: User.self) == 2)
    }

    @Test("A keyed replaying subscriber replays only its keys; a subscriber without replayingSticky replays nothing")
    func keyedReplay() {
        let bus = EventBus()
        bus.dispatch(User(name: "x", room: "1"), sticky: .latest)
        bus.dispatch(User(name: "y", room: "2"), sticky: .latest)
        bus.dispatch(User(name: "z"), sticky: .latest)
        let keyed = Shared<[String]>([])
        let plain = Shared<[String]>([])
        _ = bus.on(User.self).ofType("2").replayingSticky().next { keyed.append($0.name) }
        _ = bus.on(User.self).next { plain.append($0.name) }
        #expect(keyed.value == ["y"])
        #expect(plain.value.isEmpty)
    }

    @Test(".last(3) keeps the last three, oldest first; a count below 1 keeps one")
    func lastN() {
        let bus = EventBus()
        for name in ["1", "2", "3", "4", "5"] { bus.dispatch(User(name: name), sticky: .last(3)) }
        #expect(bus.stickyEvents(User.self).map(\.name) == ["3", "4", "5"])
        let got = Shared<[String]>([])
        _ = bus.on(User.self).replayingSticky().next { got.append($0.name) }
        #expect(got.value == ["3", "4", "5"])
        bus.dispatch(User(name: "only"), sticky: .last(0))
        #expect(bus.stickyEvents(User.self).map(\.name) == ["only"])
        // A later .latest replaces the whole slot.
        bus.dispatch(User(name: "6"), sticky: .last(3))
        bus.dispatch(User(name: "latest"), sticky: .latest)
        #expect(bus.stickyEvents(User.self).map(\.name) == ["latest"])
    }

    @Test(".latest(ttl:) expires on the bus's clock: never replayed or returned after, let go of by the sweep")
    func ttl() {
        let clock = ManualEventClock()
        let bus = EventBus(clock: clock)
        bus.dispatch(User(name: "short"), sticky: .latest(ttl: .seconds(5)))
        bus.dispatch(User(name: "long", room: "r"), sticky: .latest(ttl: .seconds(60)))
        clock.advance(by: .seconds(4))
        #expect(bus.sticky(User.self)?.name == "short")
        clock.advance(by: .seconds(2))
        #expect(bus.sticky(User.self) == nil)
        let got = Shared<[String]>([])
        _ = bus.on(User.self).replayingSticky().next { got.append($0.name) }
        #expect(got.value == ["long"])
        #expect(bus.stickyCount == 1)
        // The sweep: plain dispatches of another type let the expired one go, with no read.
        final class Payload: @unchecked Sendable {
            let released: Shared<Bool>
            init(_ released: Shared<Bool>) { self.released = released }
            deinit { released.withLock { $0 = true } }
        }
        struct Carrier: Event { let payload: Payload }
        let released = Shared(false)
        bus.dispatch(Carrier(payload: Payload(released)), sticky: .latest(ttl: .milliseconds(10)))
        clock.advance(by: .seconds(1))
        for _ in 0..<4 { bus.dispatch(User(name: "tick")) }
        #expect(released.value, "the expired sticky event was not let go of by the sweep")
        #expect(bus.stickyCount(of: Carrier.self) == 0)
    }

    @Test(".untilDelivered: kept only if nobody received it; exactly one taker")
    func untilDelivered() {
        let bus = EventBus()
        let first = Shared<[String]>([])
        let second = Shared<[String]>([])
        bus.dispatch(User(name: "pending"), sticky: .untilDelivered)
        #expect(bus.stickyCount == 1)
        _ = bus.on(User.self).replayingSticky().next { first.append($0.name) }
        _ = bus.on(User.self).replayingSticky().next { second.append($0.name) }
        #expect(first.value == ["pending"])
        #expect(second.value.isEmpty)
        #expect(bus.stickyCount == 0)
        // With a subscriber, it is delivered and not kept.
        bus.dispatch(User(name: "delivered"), sticky: .untilDelivered)
        #expect(bus.stickyCount == 0)
        // takeSticky is a taker too.
        let quiet = EventBus()
        quiet.dispatch(User(name: "p"), sticky: .untilDelivered)
        #expect(quiet.takeSticky(User.self)?.name == "p")
        #expect(quiet.takeSticky(User.self) == nil)
    }

    @Test(".untilDelivered whose only subscribers' owners are gone (not yet swept) is kept, as a dead event would be")
    func untilDeliveredToDeadOwners() {
        final class Owner: Sendable {}
        let bus = EventBus()
        let dead = Shared<[String]>([])
        bus.deadEventHandler = { event in dead.append((event.event as? User)?.name ?? "?") }
        var owner: Owner? = Owner()
        _ = bus.on(User.self).freeWith(owner!).next { _, _ in }
        _ = bus.on(User.self).ofType("7").monitor().freeWith(owner!).next { _, _ in }
        owner = nil  // gone, but its subscriptions are still linked: the sweep has not reached them
        bus.dispatch(User(name: "plain"))
        #expect(dead.value == ["plain"], "the same situation without sticky: is a dead event")

        var again: Owner? = Owner()
        _ = bus.on(User.self).freeWith(again!).next { _, _ in }
        again = nil
        bus.dispatch(User(name: "pending"), sticky: .untilDelivered)
        #expect(bus.stickyCount == 1, "nobody received it, so it is kept")
        #expect(bus.sticky(User.self)?.name == "pending")
        let got = Shared<[String]>([])
        _ = bus.on(User.self).replayingSticky().next { got.append($0.name) }
        #expect(got.value == ["pending"])
        #expect(bus.stickyCount == 0)
        #expect(dead.value == ["plain"], "a sticky dispatch is never dead")
    }

    @Test(".untilDelivered to gone owners racing 7 replaying subscribers: received (once each) or kept, never lost")
    func untilDeliveredToDeadOwnersRacingReplays() {
        final class Owner: Sendable {}
        for round in 0..<50 {
            let bus = EventBus()
            var owner: Owner? = Owner()
            _ = bus.on(User.self).freeWith(owner!).next { _, _ in }
            owner = nil
            let received = Shared<[Int: Int]>([:])
            let finished = concurrently(8) { thread in
                if thread == 0 {
                    bus.dispatch(User(name: "once \(round)"), sticky: .untilDelivered)
                } else {
                    _ = bus.on(User.self).replayingSticky().next { _ in
                        received.withLock { $0[thread, default: 0] += 1 }
                    }
                }
            }
            #expect(finished)
            // Live to those subscribed before the dispatch started, or replayed to one of the others.
            #expect(received.value.values.allSatisfy { $0 == 1 }, "round \(round): \(received.value)")
            let kept = bus.stickyCount
            #expect(received.value.isEmpty ? kept == 1 : kept == 0, "round \(round): \(received.value), \(kept) kept")
        }
    }

    @Test(".untilDelivered with 8 threads subscribing at once: exactly one gets it")
    func untilDeliveredOneTaker() {
        for round in 0..<20 {
            let bus = EventBus()
            bus.dispatch(User(name: "once \(round)"), sticky: .untilDelivered)
            let takers = Shared(0)
            #expect(concurrently(8) { _ in _ = bus.on(User.self).replayingSticky().next { _ in takers.increment() } })
            #expect(takers.value == 1)
        }
    }

    @Test("removeSticky, removeAllSticky; a replaying subscriber after removal gets nothing")
    func removal() {
        let bus = EventBus()
        bus.dispatch(User(name: "a"), sticky: .latest)
        bus.dispatch(User(name: "b", room: "1"), sticky: .latest)
        #expect(bus.removeSticky(User.self) == 1)
        #expect(bus.removeSticky(User.self) == 0)
        #expect(bus.stickyCount == 1)
        bus.removeAllSticky()
        #expect(bus.stickyCount == 0)
        let got = Shared<[String]>([])
        _ = bus.on(User.self).replayingSticky().next { got.append($0.name) }
        #expect(got.value.isEmpty)
    }

    @Test("Queued replaying subscribers get the replay before any live delivery, on their queue")
    func queuedReplayComesFirst() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "sticky.queued")
        bus.dispatch(User(name: "kept"), sticky: .latest)
        let got = Shared<[String]>([])
        queue.suspend()  // nothing runs until both the replay and a live event are enqueued
        _ = bus.on(User.self).atQueue(queue).replayingSticky().next { got.append($0.name) }
        bus.dispatch(User(name: "live"))
        queue.resume()
        #expect(drain(queue))
        #expect(got.value == ["kept", "live"])
    }

    @Test("A sticky dispatch is never dead; its events are released when the bus is")
    func neverDeadAndReleased() {
        final class Payload: @unchecked Sendable {
            let released: Shared<Bool>
            init(_ released: Shared<Bool>) { self.released = released }
            deinit { released.withLock { $0 = true } }
        }
        struct Carrier: Event { let payload: Payload }
        let released = Shared(false)
        let dead = Shared(0)
        var bus: EventBus? = EventBus()
        bus!.deadEventHandler = { _ in dead.increment() }
        bus!.dispatch(Carrier(payload: Payload(released)), sticky: .latest)
        #expect(dead.value == 0)
        #expect(!released.value)
        bus = nil
        #expect(released.value)
    }
}
