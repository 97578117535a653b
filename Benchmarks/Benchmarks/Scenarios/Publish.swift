// Publish one event to N synchronous subscribers, N = 0, 1, 10, 100, 1000: every contender gets
// the same event, the same handler body (`Sink.take`) and the same N. One operation = one publish.
// Two rows need no bus: `floor` (a closure array whose body is a trivial add into a local: the
// cost of the loop and the indirect call alone) and `closure-array` (the same array calling the
// shared `Sink.take` body); every contender is reported against both.
//
// Names: "publish_N=<n>_<contender>"; "keyed_100-keys_<contender>".

import EventBus
import Foundation
import OpenCombine

/// Subscriber counts of the publish scenario.
public let subscriberCounts = [0, 1, 10, 100, 1000]

/// Foundation's typed message, observed and posted on the main actor.
struct TickMessage: NotificationCenter.MainActorMessage {
    typealias Subject = MessageSubject
    let value: Int
}

func publishScenarios() -> [Scenario] {
    subscriberCounts.flatMap { n -> [Scenario] in
        [
            // 0. The honest floor: a plain array of closures whose body costs next to nothing (a
            // non-atomic add into a local, passed `inout`: no class property, no exclusivity check,
            // no retain). What remains is the loop and one indirect call per subscriber. The total
            // is handed to `consume` so the loop cannot be deleted.
            Scenario("publish N=\(n) floor") {
                var built = ContiguousArray<@Sendable (inout Int, Tick) -> Void>()
                for _ in 0..<n { built.append { total, event in total &+= event.value } }
                let handlers = built
                return Workload { operations in
                    var total = 0
                    for i in 0..<operations {
                        let event = Tick(value: i)
                        for handler in handlers { handler(&total, event) }
                    }
                    consume(total)
                }
            },

            // 1. A plain array of closures calling the handler body every contender shares
            // (`Sink.take`: a class property, so an exclusivity check and a non-inlined call),
            // iterated without a lock.
            Scenario("publish N=\(n) closure-array") {
                let sink = Sink()
                var handlers = ContiguousArray<@Sendable (Tick) -> Void>()
                for _ in 0..<n { handlers.append { sink.take($0.value) } }
                return Workload { operations in
                    for i in 0..<operations {
                        let event = Tick(value: i)
                        for handler in handlers { handler(event) }
                    }
                }
            },

            // 2. EventBus, synchronous `next`.
            Scenario("publish N=\(n) EventBus") {
                let bus = EventBus()
                let sink = Sink()
                for _ in 0..<n { _ = bus.on(Tick.self).next { sink.take($0.value) } }
                bus.dispatch(Tick(value: 0))  // builds the cached snapshot, as in any steady state
                return Workload { operations in
                    for i in 0..<operations { bus.dispatch(Tick(value: i)) }
                }
            },

            // 2a. EventBus, synchronous `next` given a closure value (a stored function, not a
            // literal), whose per-subscriber cost is checked against the floor as the literal's is.
            Scenario("publish N=\(n) EventBus-closure-value") {
                let bus = EventBus()
                let sink = Sink()
                let handler: @Sendable (Tick) -> Void = { sink.take($0.value) }
                for _ in 0..<n { _ = bus.on(Tick.self).next(handler) }
                bus.dispatch(Tick(value: 0))
                return Workload { operations in
                    for i in 0..<operations { bus.dispatch(Tick(value: i)) }
                }
            },

            // 2b. EventBus, owner-bound: `freeWith(owner).next { owner, event in }`.
            Scenario("publish N=\(n) EventBus-owner-bound") {
                let bus = EventBus()
                let sink = Sink()
                let owners = (0..<n).map { _ in Owner(sink: sink) }
                for owner in owners {
                    bus.on(Tick.self).freeWith(owner).next { owner, event in owner.sink.take(event.value) }
                }
                bus.dispatch(Tick(value: 0))
                return Workload { operations in
                    withExtendedLifetime(owners) {
                        for i in 0..<operations { bus.dispatch(Tick(value: i)) }
                    }
                }
            },

            // 2c. EventBus, `onMainActor()` subscribers, dispatched on the main actor (so delivered
            // synchronously): the row to set beside Foundation's MainActorMessage.
            Scenario("publish N=\(n) EventBus-main-actor") {
                let bus = EventBus()
                let sink = Sink()
                for _ in 0..<n { _ = bus.on(Tick.self).onMainActor().next { sink.take($0.value) } }
                runOnMainActor { bus.dispatch(Tick(value: 0)) }
                return Workload { operations in
                    runOnMainActor {
                        for i in 0..<operations { bus.dispatch(Tick(value: i)) }
                    }
                }
            },

            // 3. NotificationCenter with the payload in userInfo, as real code must carry it...
            Scenario("publish N=\(n) NotificationCenter-userInfo") {
                let center = NotificationCenter()
                let sink = Sink()
                let tokens = (0..<n).map { _ in
                    center.addObserver(forName: tickName, object: nil, queue: nil) { note in
                        sink.take(note.userInfo?[valueKey] as? Int ?? 0)
                    }
                }
                return Workload { operations in
                    withExtendedLifetime(tokens) {
                        for i in 0..<operations { center.post(name: tickName, object: nil, userInfo: [valueKey: i]) }
                    }
                }
            },

            // ...and with `userInfo: nil` (no payload at all: its best case).
            Scenario("publish N=\(n) NotificationCenter-nil") {
                let center = NotificationCenter()
                let sink = Sink()
                let tokens = (0..<n).map { _ in
                    center.addObserver(forName: tickName, object: nil, queue: nil) { _ in sink.take(1) }
                }
                return Workload { operations in
                    withExtendedLifetime(tokens) {
                        for _ in 0..<operations { center.post(name: tickName, object: nil, userInfo: nil) }
                    }
                }
            },

            // 4. Foundation's typed `NotificationCenter.MainActorMessage`, posted on the main actor.
            Scenario("publish N=\(n) MainActorMessage") {
                let center = NotificationCenter()
                let subject = MessageSubject()
                let sink = Sink()
                let tokens = runOnMainActor {
                    (0..<n).map { _ in
                        center.addObserver(of: subject, for: TickMessage.self) { message in sink.take(message.value) }
                    }
                }
                return Workload(finish: { for token in tokens { center.removeObserver(token) } }) { operations in
                    runOnMainActor {
                        for i in 0..<operations { center.post(TickMessage(value: i), subject: subject) }
                    }
                }
            },

            // 5. OpenCombine `PassthroughSubject` with `sink`.
            Scenario("publish N=\(n) OpenCombine") {
                let subject = PassthroughSubject<Tick, Never>()
                let sink = Sink()
                let cancellables = (0..<n).map { _ in subject.sink { sink.take($0.value) } }
                return Workload { operations in
                    withExtendedLifetime(cancellables) {
                        for i in 0..<operations { subject.send(Tick(value: i)) }
                    }
                }
            },
        ]
    }
}

/// 100 keys subscribed, one published to: EventBus routes with `ofType`; NotificationCenter with one
/// name per key; OpenCombine with a `filter` per subscriber, as Combine code does it.
func keyedScenarios() -> [Scenario] {
    let keys = (0..<100).map { "key-\($0)" }
    let target = keys[42]
    return [
        Scenario("keyed 100-keys EventBus") {
            let bus = EventBus()
            let sink = Sink()
            for key in keys { _ = bus.on(Routed.self).ofType(key).next { sink.take($0.value) } }
            bus.dispatch(Routed(value: 0, key: target))
            return Workload { operations in
                for i in 0..<operations { bus.dispatch(Routed(value: i, key: target)) }
            }
        },
        Scenario("keyed 100-keys NotificationCenter-userInfo") {
            let center = NotificationCenter()
            let sink = Sink()
            let tokens = keys.map { key in
                center.addObserver(forName: Notification.Name(key), object: nil, queue: nil) { note in
                    sink.take(note.userInfo?[valueKey] as? Int ?? 0)
                }
            }
            let name = Notification.Name(target)
            return Workload { operations in
                withExtendedLifetime(tokens) {
                    for i in 0..<operations { center.post(name: name, object: nil, userInfo: [valueKey: i]) }
                }
            }
        },
        Scenario("keyed 100-keys OpenCombine") {
            let subject = PassthroughSubject<Routed, Never>()
            let sink = Sink()
            let cancellables = keys.map { key in
                subject.filter { $0.key == key }.sink { sink.take($0.value) }
            }
            return Workload { operations in
                withExtendedLifetime(cancellables) {
                    for i in 0..<operations { subject.send(Routed(value: i, key: target)) }
                }
            }
        },
    ]
}
