// Subscription cost. One operation = one subscribe + dispose next to a population of existing
// subscribers of the same type; or one owner-bound churn cycle (create an owner, subscribe, drop
// the owner; reclaimed by the end of the run).
//
// The subscribe+dispose handlers are closure literals that capture nothing (they write the global
// `sharedSink`), for every contender: the allocations counted are the subscription's own, not a
// capture context (a capturing closure adds one allocation, for every contender alike).
//
// Names: "subscribe+dispose_existing=<population>_<contender>",
// "subscribe+dispose_keyed_existing=10k_EventBus", "owner-churn_<contender>".

import EventBus
import Foundation
import OpenCombine

/// Existing-subscriber populations for every contender...
public let populations: [(label: String, count: Int)] = [("0", 0), ("1k", 1_000), ("10k", 10_000), ("100k", 100_000)]
/// ...and the extra one for EventBus, to show the cost stays flat.
public let eventBusOnlyPopulations: [(label: String, count: Int)] = [("1M", 1_000_000)]

/// The sink of the subscribe+dispose handlers, global so that their closures capture nothing.
let sharedSink = Sink()

func subscribeScenarios() -> [Scenario] {
    let eventBus = (populations + eventBusOnlyPopulations).map { label, count in
        Scenario("subscribe+dispose existing=\(label) EventBus") {
            let bus = EventBus()
            for _ in 0..<count { _ = bus.on(Tick.self).next { sharedSink.take($0.value) } }
            return Workload { operations in
                for _ in 0..<operations { bus.on(Tick.self).next { sharedSink.take($0.value) }.dispose() }
            }
        }
    }
    // A keyed subscription next to 10k others of its key and 100 other keys: the key's list is
    // found by hashing, and outlives the dispose.
    let keyed = Scenario("subscribe+dispose keyed existing=10k EventBus") {
        let bus = EventBus()
        for i in 0..<10_000 { _ = bus.on(Routed.self).ofType("key-\(i % 101)").next { sharedSink.take($0.value) } }
        return Workload { operations in
            for _ in 0..<operations {
                bus.on(Routed.self).ofType("key-42").next { sharedSink.take($0.value) }.dispose()
            }
        }
    }
    let peers = populations.flatMap { label, count in
        [
            Scenario("subscribe+dispose existing=\(label) NotificationCenter") {
                let center = NotificationCenter()
                let tokens = (0..<count).map { _ in
                    center.addObserver(forName: tickName, object: nil, queue: nil) { note in
                        sharedSink.take(note.userInfo?[valueKey] as? Int ?? 0)
                    }
                }
                return Workload { operations in
                    withExtendedLifetime(tokens) {
                        for _ in 0..<operations {
                            let token = center.addObserver(forName: tickName, object: nil, queue: nil) { note in
                                sharedSink.take(note.userInfo?[valueKey] as? Int ?? 0)
                            }
                            center.removeObserver(token)
                        }
                    }
                }
            },
            Scenario("subscribe+dispose existing=\(label) OpenCombine") {
                let subject = PassthroughSubject<Tick, Never>()
                let cancellables = (0..<count).map { _ in subject.sink { sharedSink.take($0.value) } }
                return Workload { operations in
                    withExtendedLifetime(cancellables) {
                        for _ in 0..<operations { subject.sink { sharedSink.take($0.value) }.cancel() }
                    }
                }
            },
        ]
    }
    return eventBus + [keyed] + peers
}

/// An owner that ends its NotificationCenter observation when it is deallocated, as real code does.
private final class NotificationOwner {
    let center: NotificationCenter
    var token: (any NSObjectProtocol)?
    init(center: NotificationCenter) { self.center = center }
    deinit { if let token { center.removeObserver(token) } }
}

/// An owner whose Combine subscription is cancelled when it is deallocated.
private final class CombineOwner {
    var cancellable: AnyCancellable?
}

func ownerChurnScenarios() -> [Scenario] {
    [
        // EventBus: the owner is dropped and nothing else is done; the bus reclaims the
        // subscription itself (next dispatch of the type, periodic sweep, or `purge()`). Each run
        // ends with a `purge()` and checks that everything was reclaimed.
        Scenario("owner-churn EventBus") {
            let bus = EventBus()
            let sink = Sink()
            return Workload { operations in
                for _ in 0..<operations {
                    let owner = Owner(sink: sink)
                    bus.on(Tick.self).freeWith(owner).next { owner, event in owner.sink.take(event.value) }
                }
                bus.purge()
                precondition(bus.subscriptionCount == 0, "owner-bound subscriptions were not reclaimed")
            }
        },
        Scenario("owner-churn NotificationCenter") {
            let center = NotificationCenter()
            let sink = Sink()
            return Workload { operations in
                for _ in 0..<operations {
                    let owner = NotificationOwner(center: center)
                    owner.token = center.addObserver(forName: tickName, object: nil, queue: nil) { note in
                        sink.take(note.userInfo?[valueKey] as? Int ?? 0)
                    }
                }
            }
        },
        Scenario("owner-churn OpenCombine") {
            let subject = PassthroughSubject<Tick, Never>()
            let sink = Sink()
            return Workload { operations in
                for _ in 0..<operations {
                    let owner = CombineOwner()
                    owner.cancellable = subject.sink { sink.take($0.value) }
                }
            }
        },
    ]
}
