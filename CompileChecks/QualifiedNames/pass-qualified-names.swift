// MUST COMPILE: `EventBus.Event` and its siblings name the bus's types although the app has its own
// `Event`, `EventToken`, `DisposeBag` and `JSONValue` (module and class share the name `EventBus`).
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
    let payload: EventBus.JSONValue = ["count": 3]
    let members: EventBus.JSONObject = ["ok": true]
    let elements: EventBus.JSONArray = [1, 2]
    bus.dispatch(EventBus.JSONEvent(id: "cart", payload: payload))
    _ = (members, elements)
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
