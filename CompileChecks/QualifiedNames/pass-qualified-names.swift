// MUST COMPILE: `EventBus.Event` and its siblings name the bus's types although the app has its own
// `Event`, `EventToken` and `DisposeBag` (module and class share the name `EventBus`): the nested
// aliases, for Swift 6.2, where module selectors (pass-module-selectors.swift) do not exist.
import EventBus

struct Ping: EventBus.Event {
    let room: String
    var eventType: String? { room }
}

enum Room: String, EventBus.EventRoutingKey {
    case lobby
}

struct Knock: EventBus.Event {
    var eventType: Room { .lobby }
}

final class Badge: EventBus.EventSubscribing, Sendable {
    func start() {
        subscribe(Ping.self).next { _, ping in print(ping.room) }
    }
}

func wire(bus: EventBus) -> [EventBus.EventToken] {
    let bag = EventBus.DisposeBag()
    let appEvent = Event(name: "the app's own type")  // the app's types still resolve unqualified
    let appToken = EventToken()
    let appBag = DisposeBag()
    _ = (appEvent, appToken, appBag)
    bus.on(Ping.self).next { print($0.room) }.disposed(by: bag)
    let maker = bus.on(Ping.self).onMainActor()
    func describe<D: EventBus.EventDeliveryStyle>(_: D.Type) -> String { "\(D.self)" }
    func isNonisolated<D: EventBus.NonisolatedDelivery>(_: D.Type) -> Bool { true }
    _ = describe(EventBus.EventDelivery.MainActor.self)
    _ = isNonisolated(EventBus.EventDelivery.Queued.self)
    func isOnMainActor<D: EventBus.MainActorDelivery>(_: D.Type) -> Bool { true }
    _ = isOnMainActor(EventBus.EventDelivery.MainActorChain.self)
    bus.dispatch(Ping(room: "7"))
    bus.dispatch(Knock())
    return [maker.next { _ in }]
}
