// The delivery policies (issue 11) against the plain dispatch they build on: one operation = one
// dispatch to 10 synchronous subscribers (the handler body every contender shares), spread over
// three priorities, behind a `handle` that continues, followed by a monitor, delivered as a
// supertype, or kept as a sticky event.
//
// Names: "policies_<variant>_EventBus".

import EventBus

/// What the supertype scenarios are delivered as.
protocol TickLike: Sendable { var value: Int { get } }

/// `Tick`, also delivered as `any TickLike`.
struct SupertypedTick: Event, TickLike, DeliveredAsSupertypes {
    let value: Int
    static let supertypes: [Supertype<Self>] = [.as((any TickLike).self) { $0 }]
}

/// A bus with the subscribers `subscribe` makes, all feeding one `Sink`.
private func bus(_ subscribe: (EventBus, Sink) -> Void) -> (EventBus, Sink) {
    let bus = EventBus()
    let sink = Sink()
    subscribe(bus, sink)
    return (bus, sink)
}

func policyScenarios() -> [Scenario] {
    [
        // The reference: 10 plain subscribers.
        Scenario("policies plain-10 EventBus") {
            let (bus, _) = bus { bus, sink in for _ in 0..<10 { _ = bus.on(Tick.self).next { sink.take($0.value) } } }
            return Workload { operations in for i in 0..<operations { bus.dispatch(Tick(value: i)) } }
        },
        // The same 10 over three priorities (4 high, 3 normal, 3 low): two more levels to walk.
        Scenario("policies priorities-10 EventBus") {
            let (bus, _) = bus { bus, sink in
                let priorities: [EventPriority] = [.high, .normal, .low]
                for i in 0..<10 { _ = bus.on(Tick.self).priority(priorities[i % 3]).next { sink.take($0.value) } }
            }
            return Workload { operations in for i in 0..<operations { bus.dispatch(Tick(value: i)) } }
        },
        // 9 plain subscribers behind one `handle` that continues, and a monitor after them.
        Scenario("policies handle-and-monitor-10 EventBus") {
            let (bus, _) = bus { bus, sink in
                _ = bus.on(Tick.self).priority(.high).handle { event in
                    sink.take(event.value)
                    return .continue
                }
                for _ in 0..<8 { _ = bus.on(Tick.self).next { sink.take($0.value) } }
                _ = bus.on(Tick.self).monitor().next { sink.take($0.value) }
            }
            return Workload { operations in for i in 0..<operations { bus.dispatch(Tick(value: i)) } }
        },
        // 10 subscribers of the supertype only: the conversion and a second fan-out.
        Scenario("policies supertype-10 EventBus") {
            let (bus, _) = bus { bus, sink in
                for _ in 0..<10 { _ = bus.on(anyOf: (any TickLike).self).next { sink.take($0.value) } }
            }
            return Workload { operations in for i in 0..<operations { bus.dispatch(SupertypedTick(value: i)) } }
        },
        // 10 plain subscribers of an event that declares a supertype nobody subscribes to.
        Scenario("policies supertype-unused-10 EventBus") {
            let (bus, _) = bus { bus, sink in
                for _ in 0..<10 { _ = bus.on(SupertypedTick.self).next { sink.take($0.value) } }
            }
            return Workload { operations in for i in 0..<operations { bus.dispatch(SupertypedTick(value: i)) } }
        },
        // 10 plain subscribers with a tracer set that counts the records (issue 12): a record built
        // (a type name, two counts) and the tracer read under the lock again, per dispatch.
        Scenario("policies traced-10 EventBus") {
            let (bus, sink) = bus { bus, sink in for _ in 0..<10 { _ = bus.on(Tick.self).next { sink.take($0.value) } }
            }
            bus.tracer = { record in if case .dispatched(let dispatched) = record { sink.take(dispatched.delivered) } }
            return Workload { operations in for i in 0..<operations { bus.dispatch(Tick(value: i)) } }
        },
        // 10 plain subscribers, each dispatch kept as the latest sticky event.
        Scenario("policies sticky-latest-10 EventBus") {
            let (bus, _) = bus { bus, sink in for _ in 0..<10 { _ = bus.on(Tick.self).next { sink.take($0.value) } } }
            return Workload { operations in for i in 0..<operations { bus.dispatch(Tick(value: i), sticky: .latest) } }
        },
    ]
}
