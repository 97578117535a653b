import Dispatch
import Testing

@testable import EventBus

/// Several tracers at once (DESIGN §11, §14; swift-log's `MultiplexLogHandler` is the model): each
/// added tracer gets every record beside the others, the `tracer` property is one of them, and a
/// token removes its own only. Bus and both node types share the settings (`EventConfigurable`).
@Suite("Tracing: several tracers at once", .offThePool)
struct SeveralTracersTests {
    struct Login: Event { let userID: String }
    struct Liked: Event { let id: Int }

    /// Appends `name` and the record's kind to `log` for each record.
    static func tracer(_ name: String, into log: Shared<[String]>) -> @Sendable (TraceRecord) -> Void {
        { record in
            let kind =
                switch record {
                case .dispatched: "dispatched"
                case .subscribed: "subscribed"
                case .ended: "ended"
                case .chainHop: "hop"
                case .deadEvent: "dead"
                default: "other"
                }
            log.append("\(name) \(kind)")
        }
    }

    @Test("the property's tracer and two added ones each get every record, the property's first")
    func allReceive() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        bus.tracer = Self.tracer("main", into: log)
        let logging = bus.addTracer(Self.tracer("logging", into: log))
        let metrics = bus.addTracer(Self.tracer("metrics", into: log))
        bus.dispatch(Login(userID: "42"))  // reaches nobody: a dispatch record, then a dead event
        #expect(
            log.value == [
                "main dispatched", "logging dispatched", "metrics dispatched", "main dead", "logging dead",
                "metrics dead",
            ])
        #expect(!logging.isRemoved && !metrics.isRemoved)
    }

    @Test("setting the property, to nil too, leaves the added tracers; a token removes its own only")
    func independentSlots() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let logging = bus.addTracer(Self.tracer("logging", into: log))
        let metrics = bus.addTracer(Self.tracer("metrics", into: log))
        bus.tracer = Self.tracer("main", into: log)
        bus.tracer = nil
        #expect(bus.tracer == nil, "the property reads its own slot, not the composed tracer")
        bus.dispatch(Login(userID: "42"))
        #expect(log.value == ["logging dispatched", "metrics dispatched", "logging dead", "metrics dead"])
        logging.remove()
        #expect(logging.isRemoved && !metrics.isRemoved)
        log.withLock { $0 = [] }
        bus.dispatch(Login(userID: "42"))
        #expect(log.value == ["metrics dispatched", "metrics dead"])
        logging.remove()  // twice: nothing happens
        metrics.remove()
        log.withLock { $0 = [] }
        bus.dispatch(Login(userID: "42"))
        #expect(log.value.isEmpty)
    }

    @Test("a tracer that removes itself in its call gets no later record; the others still do")
    func removesItself() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let token = Shared<EventTracerToken?>(nil)
        token.withLock {
            $0 = bus.addTracer { record in
                log.append("once")
                token.value?.remove()
            }
        }
        _ = bus.addTracer(Self.tracer("other", into: log))
        bus.dispatch(Login(userID: "1"))
        bus.dispatch(Login(userID: "2"))
        #expect(log.value == ["once", "other dispatched", "other dead", "other dispatched", "other dead"])
    }

    /// Captured by a tracer: its deinit reads the bus's tracers and subscriptions from a thread of
    /// its own, which waits (with a timeout) if the tracer set's or the bus's lock is still held.
    final class LockProbe: @unchecked Sendable {
        // @unchecked Sendable: `bus` is only read; `lockWasHeld` is a `Shared`.
        weak var bus: EventBus?
        let lockWasHeld: Shared<Bool?>

        init(bus: EventBus, lockWasHeld: Shared<Bool?>) {
            self.bus = bus
            self.lockWasHeld = lockWasHeld
        }

        deinit {
            guard let bus else { return }
            let tookLocks = onThread(stackSize: 512 << 10) {
                _ = bus.tracer  // the tracer set's lock
                _ = bus.subscriptionCount  // the bus's lock
            }
            lockWasHeld.withLock { $0 = !tookLocks }
        }
    }

    @Test("a removed tracer is released with no lock held, and its deinit may change the tracers")
    func releasedAfterUnlocking() {
        let bus = EventBus()
        let lockWasHeld = Shared<Bool?>(nil)
        let token = bus.addTracer { [probe = LockProbe(bus: bus, lockWasHeld: lockWasHeld)] _ in
            withExtendedLifetime(probe) {}
        }
        token.remove()
        #expect(lockWasHeld.value == false, "the removed tracer was released under a lock")
        let replacedWasHeld = Shared<Bool?>(nil)
        bus.tracer = { [probe = LockProbe(bus: bus, lockWasHeld: replacedWasHeld)] _ in withExtendedLifetime(probe) {} }
        bus.tracer = nil
        #expect(replacedWasHeld.value == false, "the replaced property's tracer was released under a lock")
    }

    @Test("after the bus is gone its tracers saw the ends, and a token's removal does nothing")
    func busGone() {
        var bus: EventBus? = EventBus()
        let log = Shared<[String]>([])
        let token = bus!.addTracer(Self.tracer("added", into: log))
        bus!.on(Login.self).next { _ in }.disposed(by: DisposeBag())  // disposed at once: one end
        _ = bus!.on(Login.self).next { _ in }
        log.withLock { $0 = [] }
        bus = nil
        #expect(log.value == ["added ended"], "the bus-gone end of the live subscription")
        #expect(token.isRemoved)
        token.remove()
    }

    @Test("threads adding and removing tracers at once leave exactly the tracers not removed", .tags(.stress))
    func concurrentChanges() {
        let bus = EventBus()
        let calls = Shared(0)
        let kept = Shared<[EventTracerToken]>([])
        let finished = concurrently(4) { thread in
            for round in 0..<200 {
                let token = bus.addTracer { _ in calls.increment() }
                if round % 50 == 0 && thread == 0 { kept.withLock { $0.append(token) } } else { token.remove() }
            }
        }
        #expect(finished, "the threads did not finish in time")
        bus.dispatch(Login(userID: "42"))
        #expect(calls.value == 2 * kept.value.count, "a dispatch record and a dead event each")
        #expect(kept.value.count == 4)
        print(
            "several tracers: 4 threads added 800 tracers and removed \(800 - kept.value.count); one dispatch reached \(calls.value)"
        )
    }

    @Test("bus, node and main-actor node share one configuration surface, each its own settings")
    @MainActor
    func sharedSurface() {
        let bus = EventBus()
        let node = EventNode(name: "Cell")
        let mainNode = MainActorEventNode(name: "List")
        let log = Shared<[String]>([])
        let errors = Shared(0)
        let configurables: [any EventConfigurable] = [bus, node, mainNode]
        var tokens: [EventTracerToken] = []
        for (index, configurable) in configurables.enumerated() {
            tokens.append(configurable.addTracer(Self.tracer("\(index)", into: log)))
            configurable.handlerErrorHandler = { _ in errors.increment() }
        }
        #expect(configurables.allSatisfy { $0.handlerErrorHandler != nil })
        node.post(Liked(id: 1))
        _ = mainNode.postNow(Liked(id: 2))
        bus.dispatch(Login(userID: "42"))
        #expect(log.value == ["1 hop", "2 hop", "0 dispatched", "0 dead"], "each tracer saw its own bus or node only")
        for token in tokens { token.remove() }
        node.post(Liked(id: 3))
        #expect(log.value.count == 4)
    }
}
