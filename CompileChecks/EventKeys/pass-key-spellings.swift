// MUST COMPILE: every supported spelling of an event's key (`String?`, `String`, a stored property,
// a protocol extension's, a `String`-backed enum), and the code that handles events generically or
// as `any Event`.
import EventBus

struct NoKey: Event {}

struct OptionalKey: Event {
    var room: String?
    var eventType: String? { room }
}

struct NonOptionalKey: Event {
    let room: String
    var eventType: String { room }  // the natural spelling: routes
}

struct StoredKey: Event {
    let eventType: String
}

struct StoredOptionalKey: Event {
    let eventType: String?
}

protocol RoomEvent: Event {
    var room: String { get }
}

extension RoomEvent {
    var eventType: String { room }
}

struct Joined: RoomEvent {
    let room: String
}

struct Generic<Payload: Sendable>: Event {
    let payload: Payload
    var eventType: String { "generic" }
}

final class ClassEvent: Event {
    var eventType: String { "class" }
}

enum Room: String, EventRoutingKey {
    case lobby, kitchen
}

struct Knock: Event {
    let room: Room
    var eventType: Room { room }
}

struct MaybeKnock: Event {
    let room: Room?
    var eventType: Room? { room }
}

func everything() {
    route(NoKey(), to: "k")
    route(OptionalKey(room: "k"), to: "k")
    route(NonOptionalKey(room: "k"), to: "k")
    route(StoredKey(eventType: "k"), to: "k")
    route(StoredOptionalKey(eventType: nil), to: "k")
    route(Joined(room: "k"), to: "k")
    route(Generic(payload: 1), to: "generic")
    route(ClassEvent(), to: "class")
    route(Knock(room: .lobby), to: "lobby")
    route(MaybeKnock(room: nil), to: "lobby")

    // Events as existentials, and generic code, still compile.
    let events: [any Event] = [NoKey(), NonOptionalKey(room: "k"), Knock(room: .kitchen)]
    let bus = EventBus()
    for event in events { bus.dispatch(event) }
    let types: [any Event.Type] = [NoKey.self, Joined.self]
    _ = types

    // Reading the key keeps its declared type.
    let optional: String? = OptionalKey(room: nil).eventType
    let none: NoEventTypeKey = NoKey().eventType
    let nonOptional: String = NonOptionalKey(room: "k").eventType
    let room: Room = Knock(room: .lobby).eventType
    _ = (optional, none, nonOptional, room)
}

func forward<E: Event>(_ event: E, on bus: EventBus) {
    bus.dispatch(event)
    bus.on(E.self).next { _ in }.dispose()
}
