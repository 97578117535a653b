import Dispatch
import EventBus
import Testing

/// DESIGN §7: priorities, `handle` and stop, monitors.
@Suite("Policies: priorities, stop and monitors", .tags(.stress), .offThePool)
struct PriorityAndStopTests {
    struct Tap: Event {
        var key: String? = nil
        var eventType: String? { key }
    }

    @Test("Order: priority, then keyed before unkeyed, then subscription order; monitors last, by their priority")
    func order() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Tap.self).monitor().next { _ in log.append("monitor normal") }
        _ = bus.on(Tap.self).priority(.low).next { _ in log.append("low unkeyed") }
        _ = bus.on(Tap.self).next { _ in log.append("normal unkeyed 1") }
        _ = bus.on(Tap.self).ofType("k").priority(.low).next { _ in log.append("low keyed") }
        _ = bus.on(Tap.self).priority(.high).monitor().next { _ in log.append("monitor high") }
        _ = bus.on(Tap.self).ofType("k").next { _ in log.append("normal keyed") }
        _ = bus.on(Tap.self).priority(.high).next { _ in log.append("high unkeyed") }
        _ = bus.on(Tap.self).next { _ in log.append("normal unkeyed 2") }
        _ = bus.on(Tap.self).ofType("k").priority(.high).next { _ in log.append("high keyed") }

        bus.dispatch(Tap(key: "k"))

        #expect(
            log.value == [
                "high keyed", "high unkeyed", "normal keyed", "normal unkeyed 1", "normal unkeyed 2", "low keyed",
                "low unkeyed", "monitor high", "monitor normal",
            ])
    }

    @Test("A later priority() replaces an earlier one; priority and monitor combine in either order")
    func priorityReplacesAndCombines() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Tap.self).next { _ in log.append("normal") }
        _ = bus.on(Tap.self).priority(.low).priority(.high).next { _ in log.append("high") }
        _ = bus.on(Tap.self).monitor().priority(.low).next { _ in log.append("monitor low") }
        _ = bus.on(Tap.self).priority(.high).monitor().next { _ in log.append("monitor high") }
        bus.dispatch(Tap())
        #expect(log.value == ["high", "normal", "monitor high", "monitor low"])
    }

    @Test("stop ends the handlers of every key and level; monitors still see the event")
    func stopSkipsHandlersNotMonitors() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Tap.self).ofType("k").priority(.high).next { _ in log.append("before") }
        _ = bus.on(Tap.self).handle { _ in
            log.append("stopper")
            return .stop
        }
        _ = bus.on(Tap.self).next { _ in log.append("after, same level") }
        _ = bus.on(Tap.self).priority(.low).ofType("k").next { _ in log.append("after, low keyed") }
        _ = bus.on(Tap.self).monitor().next { _ in log.append("monitor") }
        _ = bus.on(Tap.self).monitor().ofType("k").next { _ in log.append("keyed monitor") }

        bus.dispatch(Tap(key: "k"))

        #expect(log.value == ["before", "stopper", "keyed monitor", "monitor"])
    }

    @Test(".continue lets the dispatch go on; the owner-passing handle gets its owner")
    func continueAndOwner() {
        let bus = EventBus()
        let owner = Sentinel()
        let log = Shared<[String]>([])
        bus.on(Tap.self).freeWith(owner).handle { owner, _ in
            log.append("owner \(owner === owner)")
            return .continue
        }
        _ = bus.on(Tap.self).next { _ in log.append("next") }
        bus.dispatch(Tap())
        #expect(log.value == ["owner true", "next"])
        withExtendedLifetime(owner) {}
    }

    @Test(
        "stop in a fan-out wider than a chunk (100 handlers, 40 monitors): the rest are skipped, every monitor runs",
        arguments: [0, 31, 32, 33, 99])
    func stopAcrossChunks(stopAt: Int) {
        let bus = EventBus()
        let called = Shared<[Int]>([])
        let monitors = Shared(0)
        for i in 0..<100 {
            _ = bus.on(Tap.self).handle { _ in
                called.withLock { $0.append(i) }
                return i == stopAt ? .stop : .continue
            }
        }
        for _ in 0..<40 { _ = bus.on(Tap.self).monitor().next { _ in monitors.increment() } }
        bus.dispatch(Tap())
        #expect(called.value == Array(0...stopAt))
        #expect(monitors.value == 40)
        // The next dispatch is not affected.
        called.withLock { $0 = [] }
        bus.dispatch(Tap())
        #expect(called.value == Array(0...stopAt))
    }

    @Test("A throwing handle: its error goes to the error handler and counts as .continue; otherwise it decides")
    func throwingHandle() {
        struct Refused: Error {}
        let bus = EventBus()
        let errors = Shared<[String]>([])
        bus.handlerErrorHandler = { failure in errors.append("\(failure.error)") }
        let log = Shared<[String]>([])
        let refuse = Shared(true)
        let owner = Sentinel()
        let gate = bus.on(Tap.self).priority(.high).handle { _ throws in
            log.append("gate")
            if refuse.value { throw Refused() }
            return .stop
        }
        bus.on(Tap.self).freeWith(owner).handle { owner, _ throws in
            log.append("owner gate \(owner === owner)")
            return .continue
        }
        let after = bus.on(Tap.self).next { _ in log.append("after") }
        bus.dispatch(Tap())
        #expect(log.value == ["gate", "owner gate true", "after"])
        #expect(errors.value == ["Refused()"])
        refuse.withLock { $0 = false }
        bus.dispatch(Tap())
        #expect(log.value == ["gate", "owner gate true", "after", "gate"], "no error: the stop applies")
        #expect(errors.value.count == 1)
        gate.dispose()
        after.dispose()
        withExtendedLifetime(owner) {}
    }

    @Test("A nested dispatch's stop ends only the nested dispatch")
    func nestedDispatchesAreIndependent() {
        struct Inner: Event {}
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Tap.self).next { [unowned bus] _ in
            log.append("outer 1")
            bus.dispatch(Tap(key: "nested"))
        }
        _ = bus.on(Tap.self).ofType("nested").handle { _ in
            log.append("nested stopper")
            return .stop
        }
        _ = bus.on(Tap.self).next { event in log.append(event.key == nil ? "outer 2" : "nested, must not run") }
        bus.dispatch(Tap())
        #expect(log.value == ["outer 1", "nested stopper", "outer 2"])
    }

    @Test("Queued and main-actor subscribers are enqueued in priority order")
    func queuedFollowPriority() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "priority.queued")
        let log = Shared<[String]>([])
        _ = bus.on(Tap.self).atQueue(queue).priority(.low).next { _ in log.append("low") }
        _ = bus.on(Tap.self).atQueue(queue).next { _ in log.append("normal") }
        _ = bus.on(Tap.self).atQueue(queue).monitor().next { _ in log.append("monitor") }
        _ = bus.on(Tap.self).priority(.high).atQueue(queue).next { _ in log.append("high") }
        bus.dispatch(Tap())
        #expect(drain(queue))
        #expect(log.value == ["high", "normal", "low", "monitor"])
    }

    @Test("Disposing a handler from a stopping handler, and a stopped dispatch with every handler disposed")
    func disposeFromHandle() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let later = Shared<EventToken?>(nil)
        _ = bus.on(Tap.self).handle { _ in
            later.value?.dispose()
            log.append("stopper")
            return .stop
        }
        later.withLock { $0 = bus.on(Tap.self).monitor().next { _ in log.append("disposed monitor") } }
        _ = bus.on(Tap.self).monitor().next { _ in log.append("monitor") }
        bus.dispatch(Tap())
        #expect(log.value == ["stopper", "monitor"])
        #expect(bus.subscriptionCount == 2)
    }

    @Test(
        "Runs of plain handlers between other kinds: a stop skips the plain handlers after it, not the plain monitors; a plain handler disposed by an earlier one is not called",
        arguments: [3, 20, 40])
    func plainRunsAroundAStop(runLength: Int) {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let owner = Sentinel()
        let disposed = Shared<[EventToken]>([])
        // plain × n, owner-bound, plain × n (the first disposes the last), stopper, plain × n,
        // plain monitors × n, an owner-bound monitor, plain monitors × n: runs of one node class
        // broken by another, within a chunk and across chunks.
        for i in 0..<runLength { _ = bus.on(Tap.self).next { _ in log.append("a\(i)") } }
        bus.on(Tap.self).freeWith(owner).next { _, _ in log.append("owned") }
        _ = bus.on(Tap.self).next { _ in
            for token in disposed.value { token.dispose() }
            log.append("b0")
        }
        for i in 1..<runLength { _ = bus.on(Tap.self).next { _ in log.append("b\(i)") } }
        let last = bus.on(Tap.self).next { _ in log.append("disposed") }
        disposed.withLock { $0 = [last] }
        _ = bus.on(Tap.self).handle { _ in
            log.append("stopper")
            return .stop
        }
        for _ in 0..<runLength { _ = bus.on(Tap.self).next { _ in log.append("skipped") } }
        for i in 0..<runLength { _ = bus.on(Tap.self).monitor().next { _ in log.append("m\(i)") } }
        bus.on(Tap.self).monitor().freeWith(owner).next { _, _ in log.append("owned monitor") }
        for i in 0..<runLength { _ = bus.on(Tap.self).monitor().next { _ in log.append("n\(i)") } }
        bus.dispatch(Tap())
        let expected =
            (0..<runLength).map { "a\($0)" } + ["owned"] + (0..<runLength).map { "b\($0)" } + ["stopper"]
            + (0..<runLength).map { "m\($0)" } + ["owned monitor"] + (0..<runLength).map { "n\($0)" }
        #expect(log.value == expected)
        withExtendedLifetime(owner) {}
    }
}
