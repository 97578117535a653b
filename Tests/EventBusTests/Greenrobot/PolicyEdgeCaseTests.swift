import Dispatch
import Testing

@testable import EventBus

// Edge cases of the delivery policies beyond what greenrobot's tests cover: stops in
// fan-outs larger than a dispatch chunk (32), priorities with keys, stops and supertypes, sticky
// policies under concurrency and a manual clock, dead events, throwing handlers off the
// dispatching thread, and disposal from inside a `handle` handler.
extension Greenrobot {
    @Suite("PolicyEdgeCaseTests (delivery policies, beyond greenrobot)", .offThePool)
    struct PolicyEdgeCaseTests {
        struct Tap: Event { var value = 0 }

        struct Keyed: Event {
            var key: String?
            var value = 0
            var eventType: String? { key }
        }

        protocol Activity: Sendable { var value: Int { get } }
        protocol Audited: Sendable {}

        struct Sent: Event, Activity, Audited, DeliveredAsSupertypes {
            var value = 0
            var key: String?
            var eventType: String? { key }
            static let supertypes: [Supertype<Self>] = [
                .as((any Activity).self) { $0 },
                .as((any Audited).self) { $0 },
            ]
        }

        struct Failure: Error, Equatable { var tag: String }

        // MARK: Stop in fan-outs larger than a chunk

        /// `handlers` handlers then `monitors` monitors, all of `Tap`; handler `stopAt` stops.
        static func fanOut(
            handlers: Int, monitors: Int, stopAt: Int, on bus: EventBus, log: Shared<[String]>
        ) {
            for i in 0..<handlers {
                _ = bus.on(Tap.self).handle { _ in
                    log.append("h\(i)")
                    return i == stopAt ? .stop : .continue
                }
            }
            for i in 0..<monitors {
                _ = bus.on(Tap.self).monitor().next { _ in log.append("m\(i)") }
            }
        }

        @Test(
            "a stop at any position of a fan-out past 32 skips the rest and still runs every monitor",
            arguments: [0, 5, 30, 31, 32, 33, 63, 64, 65, 79])
        func stopInLargeFanOut(stopAt: Int) {
            let bus = EventBus()
            let log = Shared<[String]>([])
            Self.fanOut(handlers: 80, monitors: 40, stopAt: stopAt, on: bus, log: log)
            bus.dispatch(Tap())
            let expected = (0...stopAt).map { "h\($0)" } + (0..<40).map { "m\($0)" }
            #expect(log.value == expected)

            // The next dispatch is not stopped early by the last one.
            log.withLock { $0.removeAll() }
            bus.dispatch(Tap())
            #expect(log.value == expected)
        }

        @Test("a stop in a large fan-out across priorities skips the lower levels, monitors run by their priority")
        func stopAcrossPrioritiesInLargeFanOut() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            for level in [EventPriority.low, .normal, .high] {
                for i in 0..<40 {
                    _ = bus.on(Tap.self).priority(level).handle { _ in
                        log.append("\(level)\(i)")
                        return level == .normal && i == 35 ? .stop : .continue
                    }
                    _ = bus.on(Tap.self).priority(level).monitor().next { _ in log.append("m-\(level)\(i)") }
                }
            }
            bus.dispatch(Tap())
            let expected =
                (0..<40).map { "high\($0)" } + (0...35).map { "normal\($0)" }
                + [EventPriority.high, .normal, .low].flatMap { level in (0..<40).map { "m-\(level)\($0)" } }
            #expect(log.value == expected)
        }

        @Test("a handler disposing subscribers a chunk or more ahead: they are not called")
        func disposeAheadInLargeFanOut() {
            let bus = EventBus()
            let log = Shared<[Int]>([])
            let tokens = Shared<[EventToken]>([])
            for i in 0..<80 {
                let token = bus.on(Tap.self).handle { _ in
                    log.withLock { $0.append(i) }
                    if i == 0 { for victim in [1, 31, 32, 33, 64, 79] { tokens.value[victim].dispose() } }
                    return .continue
                }
                tokens.withLock { $0.append(token) }
            }
            bus.dispatch(Tap())
            let disposed: Set = [1, 31, 32, 33, 64, 79]
            #expect(log.value == (0..<80).filter { !disposed.contains($0) })
            #expect(bus.subscriptionCount == 80 - disposed.count)
        }

        // MARK: Priorities with keys

        @Test("order: priority, then keyed before unkeyed, then subscription order; monitors last by priority")
        func prioritiesWithKeys() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            // Subscribed in an order that matches none of the criteria.
            _ = bus.on(Keyed.self).priority(.low).next { _ in log.append("low-unkeyed") }
            _ = bus.on(Keyed.self).monitor().next { _ in log.append("monitor-normal-unkeyed") }
            _ = bus.on(Keyed.self).ofType("a").priority(.low).next { _ in log.append("low-a") }
            _ = bus.on(Keyed.self).next { _ in log.append("normal-unkeyed-1") }
            _ = bus.on(Keyed.self).ofType("b").ofType("a").next { _ in log.append("normal-ba") }
            _ = bus.on(Keyed.self).priority(.high).monitor().ofType("a").next { _ in log.append("monitor-high-a") }
            _ = bus.on(Keyed.self).ofType("b").next { _ in log.append("normal-b") }
            _ = bus.on(Keyed.self).priority(.high).next { _ in log.append("high-unkeyed") }
            _ = bus.on(Keyed.self).ofType("a").next { _ in log.append("normal-a") }
            _ = bus.on(Keyed.self).ofType("a").ofType("a").priority(.high).next { _ in log.append("high-aa") }
            _ = bus.on(Keyed.self).next { _ in log.append("normal-unkeyed-2") }
            _ = bus.on(Keyed.self).priority(.low).monitor().next { _ in log.append("monitor-low-unkeyed") }

            bus.dispatch(Keyed(key: "a"))
            #expect(
                log.value == [
                    "high-aa", "high-unkeyed",
                    "normal-ba", "normal-a", "normal-unkeyed-1", "normal-unkeyed-2",
                    "low-a", "low-unkeyed",
                    "monitor-high-a", "monitor-normal-unkeyed", "monitor-low-unkeyed",
                ])

            log.withLock { $0.removeAll() }
            bus.dispatch(Keyed(key: "b"))
            #expect(
                log.value == [
                    "high-unkeyed", "normal-ba", "normal-b", "normal-unkeyed-1", "normal-unkeyed-2",
                    "low-unkeyed", "monitor-normal-unkeyed", "monitor-low-unkeyed",
                ])

            log.withLock { $0.removeAll() }
            bus.dispatch(Keyed(key: nil))
            #expect(
                log.value == [
                    "high-unkeyed", "normal-unkeyed-1", "normal-unkeyed-2", "low-unkeyed",
                    "monitor-normal-unkeyed", "monitor-low-unkeyed",
                ])
        }

        @Test("a keyed high handler that stops skips the unkeyed and lower ones of every key, not the monitors")
        func keyedStop() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            _ = bus.on(Keyed.self).ofType("a").priority(.high).handle { event in
                log.append("stopper")
                return event.value == 1 ? .stop : .continue
            }
            _ = bus.on(Keyed.self).priority(.high).next { _ in log.append("high-unkeyed") }
            _ = bus.on(Keyed.self).ofType("a").next { _ in log.append("normal-a") }
            _ = bus.on(Keyed.self).ofType("a").monitor().next { _ in log.append("monitor-a") }
            _ = bus.on(Keyed.self).monitor().next { _ in log.append("monitor") }
            bus.dispatch(Keyed(key: "a", value: 1))
            #expect(log.value == ["stopper", "monitor-a", "monitor"])
            log.withLock { $0.removeAll() }
            bus.dispatch(Keyed(key: "a", value: 0))
            #expect(log.value == ["stopper", "high-unkeyed", "normal-a", "monitor-a", "monitor"])
        }

        // MARK: Stops and supertypes

        @Test("a handler of the exact type that stops skips the supertypes' handlers; their monitors run")
        func stopBeforeSupertypes() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            _ = bus.on(Sent.self).handle { _ in
                log.append("exact-stop")
                return .stop
            }
            _ = bus.on(Sent.self).priority(.low).next { _ in log.append("exact-low") }
            _ = bus.on(anyOf: (any Activity).self).priority(.high).next { _ in log.append("activity-high") }
            _ = bus.on(anyOf: (any Activity).self).monitor().next { _ in log.append("activity-monitor") }
            _ = bus.on(anyOf: (any Audited).self).next { _ in log.append("audited") }
            _ = bus.on(anyOf: (any Audited).self).monitor().next { _ in log.append("audited-monitor") }
            let dead = Shared(0)
            bus.deadEventHandler = { _ in dead.increment() }
            bus.dispatch(Sent())
            #expect(log.value == ["exact-stop", "activity-monitor", "audited-monitor"])
            #expect(dead.value == 0)
        }

        @Test("a supertype's handler that stops skips the later supertypes' handlers; their monitors run")
        func stopInSupertype() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            _ = bus.on(Sent.self).next { _ in log.append("exact") }
            _ = bus.on(anyOf: (any Activity).self).handle { activity in
                log.append("activity-stop")
                return activity.value == 1 ? .stop : .continue
            }
            _ = bus.on(anyOf: (any Activity).self).priority(.low).next { _ in log.append("activity-low") }
            _ = bus.on(anyOf: (any Audited).self).priority(.high).next { _ in log.append("audited") }
            _ = bus.on(anyOf: (any Audited).self).monitor().next { _ in log.append("audited-monitor") }
            bus.dispatch(Sent(value: 1))
            #expect(log.value == ["exact", "activity-stop", "audited-monitor"])
            log.withLock { $0.removeAll() }
            bus.dispatch(Sent(value: 0))
            #expect(log.value == ["exact", "activity-stop", "activity-low", "audited", "audited-monitor"])
        }

        @Test("a supertype subscription made by a handler during the dispatch does not get that event")
        func supertypeSubscribedDuringDispatch() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            let tokens = Shared<[EventToken]>([])
            _ = bus.on(Sent.self).next { [unowned bus] event in
                log.append("exact-\(event.value)")
                let token = bus.on(anyOf: (any Activity).self).next { log.append("late-\($0.value)") }
                let monitor = bus.on(anyOf: (any Audited).self).monitor().next { _ in log.append("late-monitor") }
                tokens.withLock { $0 += [token, monitor] }
            }
            bus.dispatch(Sent(value: 1))
            #expect(log.value == ["exact-1"])
            log.withLock { $0.removeAll() }
            bus.dispatch(Sent(value: 2))
            #expect(log.value.prefix(2) == ["exact-2", "late-2"])
            #expect(log.value.filter { $0 == "late-monitor" }.count == 1)
            for token in tokens.value { token.dispose() }
        }

        @Test(".untilDelivered: an exact-type monitor of an event with supertypes receives it, so it is not kept")
        func untilDeliveredMonitorOfSupertypedEvent() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            _ = bus.on(Sent.self).monitor().next { _ in log.append("monitor") }
            bus.dispatch(Sent(), sticky: .untilDelivered)
            #expect(log.value == ["monitor"])
            #expect(bus.stickyCount == 0)
            bus.dispatch(Sent(key: "other"), sticky: .untilDelivered)
            #expect(bus.stickyCount == 0, "the monitor is unkeyed: it receives every key")
        }

        @Test(".untilDelivered, once received, replaces what an earlier sticky dispatch kept")
        func untilDeliveredReceivedReplaces() {
            let bus = EventBus()
            bus.dispatch(Tap(value: 1), sticky: .latest)
            let token = bus.on(Tap.self).next { _ in }
            bus.dispatch(Tap(value: 2), sticky: .untilDelivered)
            token.dispose()
            #expect(bus.stickyCount(of: Tap.self) == 0, "the older event is stale once a newer one was received")
            bus.dispatch(Tap(value: 3), sticky: .untilDelivered)
            #expect(bus.sticky(Tap.self)?.value == 3)
        }

        @Test(".untilDelivered: a supertype subscriber of another key does not count as receiving it")
        func untilDeliveredSupertypeOtherKey() {
            let bus = EventBus()
            _ = bus.on(anyOf: (any Activity).self).ofType("a").next { _ in }
            bus.dispatch(Sent(key: "b"), sticky: .untilDelivered)
            #expect(bus.stickyCount(of: Sent.self) == 1)
            bus.dispatch(Sent(key: "a"), sticky: .untilDelivered)
            #expect(bus.stickyCount(of: Sent.self) == 1)
        }

        @Test("the event's key applies to the supertypes' subscribers")
        func supertypeKeys() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            _ = bus.on(anyOf: (any Activity).self).ofType("a").next { _ in log.append("activity-a") }
            _ = bus.on(anyOf: (any Activity).self).next { _ in log.append("activity") }
            bus.dispatch(Sent(key: "b"))
            bus.dispatch(Sent(key: "a"))
            #expect(log.value == ["activity", "activity-a", "activity"])
        }

        @Test("monitors run after every handler of the dispatch, the supertypes' handlers included")
        func exactMonitorAfterSupertypeHandlers() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            _ = bus.on(Sent.self).monitor().next { _ in log.append("exact-monitor") }
            _ = bus.on(Sent.self).next { _ in log.append("exact") }
            _ = bus.on(anyOf: (any Activity).self).next { _ in log.append("activity") }
            bus.dispatch(Sent())
            #expect(log.value == ["exact", "activity", "exact-monitor"])
        }

        @Test("a stop in a supertype's handler is seen by the exact type's monitors")
        func exactMonitorSeesSupertypeStop() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            _ = bus.on(Sent.self).monitor().next { _ in log.append("exact-monitor") }
            _ = bus.on(anyOf: (any Activity).self).handle { _ in
                log.append("activity-stop")
                return .stop
            }
            _ = bus.on(anyOf: (any Audited).self).next { _ in log.append("audited") }
            bus.dispatch(Sent())
            #expect(!log.value.contains("audited"))
            #expect(log.value == ["activity-stop", "exact-monitor"])
        }

        // MARK: Sticky policies

        @Test("an .untilDelivered event is taken by exactly one of 8 threads subscribing with replayingSticky()")
        func untilDeliveredTakenOnce() {
            for round in 0..<50 {
                let bus = EventBus()
                bus.dispatch(Tap(value: round), sticky: .untilDelivered)
                #expect(bus.stickyCount(of: Tap.self) == 1)
                let received = Shared<[Int]>([])
                let start = DispatchSemaphore(value: 0)
                let ready = Shared(0)
                let group = DispatchGroup()
                for thread in 0..<8 {
                    group.enter()
                    Thread.detach {
                        ready.increment()
                        _ = start.wait(timeout: .now() + defaultTimeout)
                        _ = bus.on(Tap.self).replayingSticky().next { event in
                            received.withLock { $0.append(thread * 1_000 + event.value) }
                        }
                        group.leave()
                    }
                }
                // Release the 8 threads together, once all are waiting.
                #expect(waitUntil { ready.value == 8 })
                for _ in 0..<8 { start.signal() }
                #expect(group.wait(timeout: .now() + defaultTimeout) == .success)
                #expect(waitUntil { bus.subscriptionCount == 8 })
                #expect(received.value.count == 1, "round \(round): \(received.value)")
                #expect(received.value.allSatisfy { $0 % 1_000 == round })
                #expect(bus.stickyCount == 0)
                #expect(bus.takeSticky(Tap.self) == nil)
            }
        }

        @Test("an .untilDelivered dispatch racing replaying subscribers reaches each at most once, and someone")
        func untilDeliveredRacingSubscribers() {
            for round in 0..<50 {
                let bus = EventBus()
                let received = Shared<[Int: Int]>([:])
                let finished = concurrently(8) { thread in
                    if thread == 0 {
                        bus.dispatch(Tap(value: round), sticky: .untilDelivered)
                    } else {
                        _ = bus.on(Tap.self).replayingSticky().next { _ in
                            received.withLock { $0[thread, default: 0] += 1 }
                        }
                    }
                }
                #expect(finished)
                #expect(received.value.values.allSatisfy { $0 == 1 }, "round \(round): \(received.value)")
                let kept = bus.stickyCount(of: Tap.self)
                #expect(received.value.isEmpty ? kept == 1 : kept == 0, "round \(round): \(received.value)")
            }
        }

        @Test(".untilDelivered: a dispatch that a monitor receives is not kept")
        func untilDeliveredMonitorReceives() {
            let bus = EventBus()
            _ = bus.on(Tap.self).monitor().next { _ in }
            bus.dispatch(Tap(), sticky: .untilDelivered)
            #expect(bus.stickyCount == 0)
        }

        @Test(".untilDelivered: a dispatch that a supertype subscriber receives is not kept for a later taker")
        func untilDeliveredSupertypeReceives() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            _ = bus.on(anyOf: (any Activity).self).next { _ in log.append("activity") }
            bus.dispatch(Sent(value: 1), sticky: .untilDelivered)
            #expect(log.value == ["activity"])
            _ = bus.on(Sent.self).replayingSticky().next { _ in log.append("exact-replay") }
            #expect(log.value == ["activity"])
            #expect(bus.stickyCount == 0)
        }

        @Test(".last(3) keeps the last three, oldest first, across keys in dispatch order")
        func lastThree() {
            let bus = EventBus()
            for value in 1...5 { bus.dispatch(Keyed(key: nil, value: value), sticky: .last(3)) }
            #expect(bus.stickyEvents(Keyed.self).map(\.value) == [3, 4, 5])
            #expect(bus.sticky(Keyed.self)?.value == 5)
            #expect(bus.stickyCount(of: Keyed.self) == 3)
            let replayed = Shared<[Int]>([])
            _ = bus.on(Keyed.self).replayingSticky().next { event in replayed.withLock { $0.append(event.value) } }
            #expect(replayed.value == [3, 4, 5])

            // Per key, and an unkeyed replaying subscriber gets every key in dispatch order.
            let keyed = EventBus()
            for (value, key) in zip(1...7, ["a", "b", "a", "c", "a", "a", "b"]) {
                keyed.dispatch(Keyed(key: key, value: value), sticky: .last(3))
            }
            #expect(keyed.stickyEvents(Keyed.self, ofType: "a").map(\.value) == [3, 5, 6])
            #expect(keyed.stickyCount(of: Keyed.self) == 3 + 2 + 1)
            let all = Shared<[Int]>([])
            _ = keyed.on(Keyed.self).replayingSticky().next { event in all.withLock { $0.append(event.value) } }
            #expect(all.value == [2, 3, 4, 5, 6, 7])
            let ab = Shared<[Int]>([])
            _ = keyed.on(Keyed.self).ofType("b").ofType("a").replayingSticky().next { event in
                ab.withLock { $0.append(event.value) }
            }
            #expect(ab.value == [2, 3, 5, 6, 7])

            // .last(0) keeps one; .latest after .last(3) keeps just the latest.
            keyed.dispatch(Keyed(key: "c", value: 8), sticky: .last(0))
            #expect(keyed.stickyEvents(Keyed.self, ofType: "c").map(\.value) == [8])
            keyed.dispatch(Keyed(key: "a", value: 9), sticky: .latest)
            #expect(keyed.stickyEvents(Keyed.self, ofType: "a").map(\.value) == [9])
        }

        @Test("TTL: kept until the manual clock reaches it, then never replayed or returned")
        func ttlExpiry() {
            let clock = ManualEventClock()
            let bus = EventBus(clock: clock)
            bus.dispatch(Tap(value: 1), sticky: .latest(ttl: .seconds(1)))
            clock.advance(by: .milliseconds(999))
            #expect(bus.sticky(Tap.self)?.value == 1)
            #expect(bus.stickyCount == 1)
            let early = Shared(0)
            _ = bus.on(Tap.self).replayingSticky().next { _ in early.increment() }
            #expect(early.value == 1)

            clock.advance(by: .milliseconds(1))
            #expect(bus.sticky(Tap.self) == nil)
            #expect(bus.stickyEvents(Tap.self).isEmpty)
            #expect(bus.stickyCount == 0)
            #expect(bus.stickyCount(of: Tap.self) == 0)
            #expect(bus.takeSticky(Tap.self) == nil)
            let late = Shared(0)
            _ = bus.on(Tap.self).replayingSticky().next { _ in late.increment() }
            #expect(late.value == 0)
        }

        @Test("TTL: a later .latest replaces the event with one that does not expire; .never and negative TTLs")
        func ttlReplacedAndExtremes() {
            let clock = ManualEventClock()
            let bus = EventBus(clock: clock)
            bus.dispatch(Tap(value: 1), sticky: .latest(ttl: .seconds(1)))
            bus.dispatch(Tap(value: 2), sticky: .latest)
            clock.advance(by: .seconds(5))
            #expect(bus.sticky(Tap.self)?.value == 2)

            bus.dispatch(Keyed(key: "never"), sticky: .latest(ttl: .never))
            bus.dispatch(Keyed(key: "negative"), sticky: .latest(ttl: .seconds(-1)))
            clock.advance(by: .seconds(1_000_000))
            #expect(bus.sticky(Keyed.self, ofType: "never") != nil)
            #expect(bus.sticky(Keyed.self, ofType: "negative") == nil)
            #expect(bus.stickyCount == 2)

            // A TTL entry inside .last(n) expires on its own; the others stay.
            bus.dispatch(Keyed(key: "mix", value: 1), sticky: .latest(ttl: .seconds(1)))
            bus.dispatch(Keyed(key: "mix", value: 2), sticky: .last(3))
            #expect(bus.stickyEvents(Keyed.self, ofType: "mix").map(\.value) == [1, 2])
            clock.advance(by: .seconds(2))
            #expect(bus.stickyEvents(Keyed.self, ofType: "mix").map(\.value) == [2])
        }

        @Test("removeSticky: a later replaying subscriber gets nothing; other keys are kept")
        func removeStickyThenReplay() {
            let bus = EventBus()
            bus.dispatch(Keyed(key: "a", value: 1), sticky: .last(2))
            bus.dispatch(Keyed(key: "a", value: 2), sticky: .last(2))
            bus.dispatch(Keyed(key: "b", value: 3), sticky: .latest)
            #expect(bus.removeSticky(Keyed.self, ofType: "a") == 2)
            #expect(bus.removeSticky(Keyed.self, ofType: "a") == 0)
            let replayed = Shared<[Int]>([])
            _ = bus.on(Keyed.self).ofType("a").replayingSticky().next { event in
                replayed.withLock { $0.append(event.value) }
            }
            #expect(replayed.value.isEmpty)
            _ = bus.on(Keyed.self).replayingSticky().next { event in replayed.withLock { $0.append(event.value) } }
            #expect(replayed.value == [3])
            #expect(bus.stickyCount == 1)
        }

        // MARK: Dead events

        @Test("dead events: not for a sticky or a stopped dispatch; yes once every subscriber was disposed")
        func deadEvents() {
            let bus = EventBus()
            let dead = Shared<[Int]>([])
            bus.deadEventHandler = { event in dead.withLock { $0.append((event.event as? Tap)?.value ?? -1) } }

            bus.dispatch(Tap(value: 1), sticky: .latest)
            bus.dispatch(Tap(value: 2), sticky: .untilDelivered)
            #expect(dead.value.isEmpty)

            let stopper = bus.on(Tap.self).handle { _ in .stop }
            bus.dispatch(Tap(value: 3))
            #expect(dead.value.isEmpty)

            let monitor = bus.on(Tap.self).monitor().next { _ in }
            stopper.dispose()
            bus.dispatch(Tap(value: 4))
            #expect(dead.value.isEmpty, "a monitor is a receiver")

            monitor.dispose()
            bus.dispatch(Tap(value: 5))
            #expect(dead.value == [5])

            // Disposed long ago (the type's bucket may be gone by now).
            for _ in 0..<1_000 { bus.dispatch(Keyed(key: "x")) }
            bus.dispatch(Tap(value: 6))
            #expect(dead.value.suffix(1) == [6])
        }

        @Test("dead events: every subscriber's owner gone; only supertype subscribers; queued subscribers")
        func deadEventsOwnersAndSupertypes() {
            let bus = EventBus()
            let dead = Shared<[String]>([])
            bus.deadEventHandler = { event in dead.append(String(describing: type(of: event.event))) }

            var owner: Sentinel? = Sentinel()
            bus.on(Tap.self).freeWith(owner).next { _, _ in }
            bus.on(Tap.self).freeWith(owner).handle { _, _ in .stop }
            owner = nil
            bus.dispatch(Tap())
            #expect(dead.value == ["Tap"])

            bus.dispatch(Sent())
            #expect(dead.value == ["Tap", "Sent"], "no subscriber of the type nor of its supertypes")
            let activity = bus.on(anyOf: (any Activity).self).next { _ in }
            bus.dispatch(Sent())
            #expect(dead.value.count == 2, "a supertype subscriber is a receiver")
            activity.dispose()
            bus.dispatch(Sent())
            #expect(dead.value == ["Tap", "Sent", "Sent"])

            let queue = DispatchQueue(label: "edge.queued")
            let queued = bus.on(Keyed.self).atQueue(queue).next { _ in }
            bus.dispatch(Keyed(key: nil))
            #expect(drain(queue))
            #expect(dead.value.count == 3, "an enqueued delivery is a receiver")
            queued.dispose()
        }

        // MARK: Throwing handlers off the dispatching thread

        @Test("a throwing atQueue handler: the error reaches handlerErrorHandler on that queue; others still run")
        func throwingOnQueue() {
            let bus = EventBus()
            let queue = DispatchQueue(label: "edge.throwing")
            let marker = DispatchSpecificKey<Int>()
            queue.setSpecific(key: marker, value: 42)
            let reports = Shared<[(tag: String, onQueue: Bool, id: UInt64)]>([])
            bus.handlerErrorHandler = { failure in
                let tag = (failure.error as? Failure)?.tag ?? "?"
                let onQueue = DispatchQueue.getSpecific(key: marker) == 42
                reports.withLock { $0.append((tag, onQueue, failure.subscriptionID)) }
            }
            let calls = Shared(0)
            let thrower = bus.on(Tap.self).atQueue(queue).next { event throws in
                throw Failure(tag: "queued-\(event.value)")
            }
            _ = bus.on(Tap.self).atQueue(queue).next { _ in calls.increment() }
            bus.dispatch(Tap(value: 1))
            bus.dispatch(Tap(value: 2))
            #expect(drain(queue))
            #expect(reports.value.map(\.tag) == ["queued-1", "queued-2"])
            #expect(reports.value.allSatisfy { $0.onQueue && $0.id == thrower.id })
            #expect(calls.value == 2)
        }

        @Test("a throwing main-actor handler: the error reaches handlerErrorHandler on the main queue")
        func throwingOnMainActor() {
            let bus = EventBus()
            let reports = Shared<[(tag: String, onMain: Bool)]>([])
            bus.handlerErrorHandler = { failure in
                let tag = (failure.error as? Failure)?.tag ?? "?"
                reports.withLock { $0.append((tag, isOnMainQueue)) }
            }
            let calls = Shared(0)
            _ = bus.on(Tap.self).onMainActor().next { event throws in
                throw Failure(tag: "main-\(event.value)")
            }
            _ = bus.on(Tap.self).onMainActor().next { _ in calls.increment() }
            #expect(!isOnMainQueue)
            bus.dispatch(Tap(value: 1))
            #expect(MainQueue.drain())
            #expect(reports.value.map(\.tag) == ["main-1"])
            #expect(reports.value.allSatisfy { $0.onMain })
            #expect(calls.value == 1)

            // Dispatched on the main actor: delivered, and reported, before dispatch returns.
            let synchronous = MainQueue.run {
                bus.dispatch(Tap(value: 2))
                return reports.value.map(\.tag)
            }
            #expect(synchronous == ["main-1", "main-2"])
        }

        @Test("a throwing monitor and a throwing supertype subscriber are reported and do not stop anything")
        func throwingMonitorAndSupertype() {
            let bus = EventBus()
            let tags = Shared<[String]>([])
            bus.handlerErrorHandler = { failure in tags.append((failure.error as? Failure)?.tag ?? "?") }
            let log = Shared<[String]>([])
            _ = bus.on(Sent.self).monitor().priority(.high).next { _ throws in throw Failure(tag: "monitor") }
            _ = bus.on(Sent.self).monitor().next { _ in log.append("monitor-2") }
            _ = bus.on(anyOf: (any Activity).self).next { _ throws in throw Failure(tag: "activity") }
            _ = bus.on(anyOf: (any Audited).self).next { _ in log.append("audited") }
            bus.dispatch(Sent())
            #expect(Set(tags.value) == ["monitor", "activity"])
            #expect(log.value.contains("monitor-2") && log.value.contains("audited"))
        }

        // MARK: Disposing from inside a handle handler

        @Test("a handle handler that disposes itself and stops: this dispatch stops, the next one skips it")
        func disposeSelfAndStop() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            let own = Shared<EventToken?>(nil)
            let token = bus.on(Tap.self).priority(.high).handle { _ in
                log.append("stopper")
                own.value?.dispose()
                return .stop
            }
            own.withLock { $0 = token }
            _ = bus.on(Tap.self).next { _ in log.append("handler") }
            _ = bus.on(Tap.self).monitor().next { _ in log.append("monitor") }
            bus.dispatch(Tap())
            #expect(log.value == ["stopper", "monitor"])
            #expect(token.isDisposed)
            bus.dispatch(Tap())
            #expect(log.value == ["stopper", "monitor", "handler", "monitor"])
        }

        @Test("a handle handler that disposes a later handler and a monitor, then continues")
        func disposeOthersAndContinue() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            let victims = Shared<[EventToken]>([])
            _ = bus.on(Tap.self).priority(.high).handle { _ in
                log.append("disposer")
                for victim in victims.value { victim.dispose() }
                return .continue
            }
            let later = bus.on(Tap.self).next { _ in log.append("later") }
            _ = bus.on(Tap.self).priority(.low).next { _ in log.append("kept") }
            let monitor = bus.on(Tap.self).monitor().next { _ in log.append("monitor") }
            victims.withLock { $0 = [later, monitor] }
            let dead = Shared(0)
            bus.deadEventHandler = { _ in dead.increment() }
            bus.dispatch(Tap())
            #expect(log.value == ["disposer", "kept"])
            #expect(bus.subscriptionCount == 2)
            #expect(dead.value == 0)
        }

        @Test("a handle handler that disposes itself during a nested dispatch it stops: the outer one goes on")
        func nestedStopIsIndependent() {
            let bus = EventBus()
            let log = Shared<[String]>([])
            let own = Shared<EventToken?>(nil)
            let token = bus.on(Tap.self).priority(.high).handle { [weak bus] event in
                log.append("stopper-\(event.value)")
                if event.value == 0 {
                    bus?.dispatch(Tap(value: 1))
                    return .continue
                }
                own.value?.dispose()
                return .stop
            }
            own.withLock { $0 = token }
            _ = bus.on(Tap.self).next { event in log.append("handler-\(event.value)") }
            _ = bus.on(Tap.self).monitor().next { event in log.append("monitor-\(event.value)") }
            bus.dispatch(Tap(value: 0))
            #expect(log.value == ["stopper-0", "stopper-1", "monitor-1", "handler-0", "monitor-0"])
        }
    }
}
