import Testing

@testable import EventBus

/// A tracer sees every dead event, whether or not `deadEventHandler` is set: a metrics or logging
/// integration counts them all, not only while the user has a handler.
@Suite("Dead events reach the tracers, with or without a dead-event handler")
struct DeadEventTracingTests {
    struct Ping: Event {}
    struct Keyed: Event {
        let room: String
        var eventType: String { room }
    }

    /// The names of the event types of the dead-event records a tracer received, in order.
    final class DeadRecords: Sendable {
        let names = Shared<[String]>([])
        let keys = Shared<[String?]>([])
        var tracer: @Sendable (TraceRecord) -> Void {
            { [names, keys] record in
                guard case .deadEvent(let dead) = record else { return }
                names.append(dead.typeName)
                keys.withLock { $0.append(dead.key) }
            }
        }
    }

    @Test("a tracer alone (set or added) receives a dead-event record for every dead dispatch")
    func tracerAlone() {
        for adds in [false, true] {
            let bus = EventBus()
            let dead = DeadRecords()
            let token = adds ? bus.addTracer(dead.tracer) : nil
            if !adds { bus.tracer = dead.tracer }
            for _ in 0..<100 { bus.dispatch(Ping()) }
            bus.dispatch(Keyed(room: "7"))
            let names = dead.names.value
            #expect(names.count == 101)
            #expect(names.dropLast().allSatisfy { $0 == String(reflecting: Ping.self) })
            #expect(names.last == String(reflecting: Keyed.self))
            #expect(dead.keys.value.last == "7")
            token?.remove()
        }
    }

    @Test("setting and unsetting the handler mid-way changes nothing for the tracer")
    func handlerComesAndGoes() {
        let bus = EventBus()
        let dead = DeadRecords()
        let token = bus.addTracer(dead.tracer)
        let handled = Shared<[String]>([])
        for _ in 0..<10 { bus.dispatch(Ping()) }
        bus.deadEventHandler = { [handled] in handled.append($0.typeName) }
        for _ in 0..<10 { bus.dispatch(Ping()) }
        bus.deadEventHandler = nil
        for _ in 0..<10 { bus.dispatch(Ping()) }
        token.remove()
        bus.dispatch(Ping())  // neither a tracer nor a handler: reported to nobody
        #expect(dead.names.value.count == 30)
        #expect(handled.value == Array(repeating: String(reflecting: Ping.self), count: 10))
    }

    @Test("a dead event's type name is the dispatch record's: the type it was dispatched as")
    func sameNameAsTheDispatch() {
        let bus = EventBus()
        let names = Shared<[String]>([])
        bus.tracer = { [names] record in
            switch record {
            case .dispatched(let dispatched): names.append("dispatched \(dispatched.typeName)")
            case .deadEvent(let dead): names.append("dead \(dead.typeName)")
            default: break
            }
        }
        bus.dispatch(Ping())
        let name = String(reflecting: Ping.self)
        #expect(names.value == ["dispatched \(name)", "dead \(name)"])
        #expect(name.hasSuffix("DeadEventTracingTests.Ping") && name.contains("EventBusTests."))
    }

    @Test("a sticky dispatch reaching nobody is never a dead event, for the tracer as for the handler")
    func stickyIsNeverDead() {
        let bus = EventBus()
        let dead = DeadRecords()
        let handled = Shared(0)
        bus.tracer = dead.tracer
        for _ in 0..<5 { bus.dispatch(Ping(), sticky: .latest) }
        bus.deadEventHandler = { [handled] _ in handled.withLock { $0 += 1 } }
        for _ in 0..<5 { bus.dispatch(Ping(), sticky: .latest) }
        #expect(dead.names.value.isEmpty)
        #expect(handled.value == 0)
        bus.dispatch(Keyed(room: "1"))  // a plain one still is
        #expect(dead.names.value == [String(reflecting: Keyed.self)])
        #expect(handled.value == 1)
    }
}
