// MUST COMPILE (Swift 6.3 and later): module selectors (SE-0491) name the module's declarations
// whatever the app declares: `EventBus::Event` is the bus's protocol, `EventBus::EventBus` its class,
// with no alias. Types the aliases do not cover resolve too (`EventBus::SubscriberMaker`).
import EventBus

struct Ping: EventBus::Event {
    let room: String
    var eventType: String? { room }
}

enum Room: String, EventBus::EventRoutingKey {
    case lobby
}

struct Knock: EventBus::Event {
    var eventType: Room { .lobby }
}

final class Badge: EventBus::EventSubscribing, Sendable {
    func start() {
        subscribe(Ping.self).next { _, ping in print(ping.room) }
    }
}

func wire(bus: EventBus::EventBus) -> [EventBus::EventToken] {
    let bag = EventBus::DisposeBag()
    let appEvent = Event(name: "the app's own type")  // the app's types still resolve unqualified
    let appToken = EventToken()
    let appBag = DisposeBag()
    _ = (appEvent, appToken, appBag)
    bus.on(Ping.self).next { print($0.room) }.disposed(by: bag)
    let maker: EventBus::SubscriberMaker<Ping, Never, EventBus::EventDelivery.MainActor> = bus.on(Ping.self)
        .onMainActor()
    func describe<D: EventBus::EventDeliveryStyle>(_: D.Type) -> String { "\(D.self)" }
    _ = describe(EventBus::EventDelivery.Queued.self)
    bus.dispatch(Ping(room: "7"))
    bus.dispatch(Knock())
    return [maker.next { _ in }]
}
