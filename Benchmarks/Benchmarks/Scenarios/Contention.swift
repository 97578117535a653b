// Two threads publishing at once, each to one subscriber: of the same type (one shared subscriber
// list) and of different types. One operation = both threads publish one event (a run has each
// thread publish `operations` events, concurrently).
//
// Names: "two-threads_same-type_<contender>", "two-threads_different-types_<contender>".

import Dispatch
import EventBus
import Foundation
import OpenCombine

/// Runs `body(thread)` on two threads at once and returns when both are done.
private func onTwoThreads(_ body: @Sendable (Int) -> Void) {
    DispatchQueue.concurrentPerform(iterations: 2, execute: body)
}

func contentionScenarios() -> [Scenario] {
    [true, false].flatMap { sameType -> [Scenario] in
        let scenario = sameType ? "two-threads same-type" : "two-threads different-types"
        return [
            // The floor: each thread iterates its own array of closures; no lock, nothing shared.
            Scenario("\(scenario) closure-array") {
                let handler: @Sendable (Tick) -> Void = { consume($0.value) }
                let lists: [ContiguousArray<@Sendable (Tick) -> Void>] = [[handler], [handler]]
                return Workload { operations in
                    onTwoThreads { thread in
                        let handlers = lists[thread]
                        for i in 0..<operations {
                            let event = Tick(value: i)
                            for handler in handlers { handler(event) }
                        }
                    }
                }
            },
            Scenario("\(scenario) EventBus") {
                let bus = EventBus()
                _ = bus.on(Tick.self).next { consume($0.value) }
                _ = bus.on(Tock.self).next { consume($0.value) }
                bus.dispatch(Tick(value: 0))
                bus.dispatch(Tock(value: 0))
                return Workload { operations in
                    onTwoThreads { thread in
                        if sameType || thread == 0 {
                            for i in 0..<operations { bus.dispatch(Tick(value: i)) }
                        } else {
                            for i in 0..<operations { bus.dispatch(Tock(value: i)) }
                        }
                    }
                }
            },
            Scenario("\(scenario) NotificationCenter-userInfo") {
                let center = NotificationCenter()
                let tokens = [tickName, tockName].map { name in
                    center.addObserver(forName: name, object: nil, queue: nil) { note in
                        consume(note.userInfo?[valueKey] as? Int ?? 0)
                    }
                }
                return Workload { operations in
                    withExtendedLifetime(tokens) {
                        onTwoThreads { thread in
                            let name = sameType || thread == 0 ? tickName : tockName
                            for i in 0..<operations { center.post(name: name, object: nil, userInfo: [valueKey: i]) }
                        }
                    }
                }
            },
            Scenario("\(scenario) OpenCombine") {
                let subjects = [PassthroughSubject<Tick, Never>(), PassthroughSubject<Tick, Never>()]
                let cancellables = subjects.map { $0.sink { consume($0.value) } }
                let shared = UncheckedSendable(value: subjects)  // PassthroughSubject locks internally
                return Workload { operations in
                    withExtendedLifetime(cancellables) {
                        onTwoThreads { thread in
                            let subject = shared.value[sameType ? 0 : thread]
                            for i in 0..<operations { subject.send(Tick(value: i)) }
                        }
                    }
                }
            },
        ]
    }
}
