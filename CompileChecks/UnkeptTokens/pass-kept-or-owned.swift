// MUST COMPILE with -warnings-as-errors: a kept token, a bag, an explicit `_ =` for a subscription
// meant to last as long as the bus, and owner-bound subscriptions (their owner ends them, so their
// token is discardable).
import EventBus

final class Screen {
    let bag = DisposeBag()
    var token: EventToken?

    func start(bus: EventBus, badge: Badge) {
        token = bus.on(Ping.self).next { ping in print(ping.text) }
        bus.on(Ping.self).next { ping in print(ping.text) }.disposed(by: bag)
        _ = bus.on(Ping.self).next { ping in print(ping.text) }  // on purpose: for the bus's life
        bus.on(Ping.self).freeWith(badge).next { owner, ping in owner.show(ping) }
        badge.subscribe(Ping.self, on: bus).onMainActor().next { owner, ping in owner.show(ping) }
    }
}
