// MUST COMPILE: the owner-passing forms, the owner ignored with `_`, unowned makers with one
// argument, and the DisposeBag a non-Sendable owner keeps: the positive counterpart of fail-*.swift.
import Dispatch
import EventBus

extension Badge {
    func start(bus: EventBus, queue: DispatchQueue) {
        subscribe(Ping.self).next { owner, ping in owner.show(ping) }
        subscribe(Ping.self, on: bus).atQueue(queue).next { owner, ping in owner.show(ping) }
        bus.on(Ping.self).freeWith(self).priority(.high).next { _, ping in print(ping.text) }
    }
}

extension InboxModel {
    func start() {
        subscribe(Ping.self).onMainActor().next { owner, ping in owner.last = ping.text }
    }
}

/// A non-Sendable owner ends its unowned subscriptions through the bag it holds.
final class SessionScreen {
    let bag = DisposeBag()

    func start(bus: EventBus) {
        bus.on(Ping.self).next { ping in print(ping.text) }.disposed(by: bag)
    }
}

func unowned(bus: EventBus) -> EventToken {
    bus.on(Ping.self).next { ping in print(ping.text) }
}
