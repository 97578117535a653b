import Testing

@testable import EventBus  // test helpers only (Shared); events are declared and routed through the public API

/// An event's secondary key routes whatever its supported spelling — `String?`,
/// the natural non-optional `String`, a stored property, a protocol extension's, a `String`-backed
/// enum — and no declaration means no key (DESIGN §2). A key of a wrong type does not compile:
/// see CompileChecks/EventKeys.
@Suite("Event keys: every supported spelling of eventType routes", .offThePool)
struct EventKeyTests {
    struct NoKey: Event {}

    struct OptionalKey: Event {
        var room: String?
        var eventType: String? { room }
    }

    struct NonOptionalKey: Event {
        let room: String
        var eventType: String { room }
    }

    struct StoredKey: Event {
        let eventType: String
    }

    protocol RoomEvent: Event {
        var room: String { get }
    }

    struct Joined: RoomEvent {
        let room: String
    }

    struct Left: RoomEvent {
        let room: String
    }

    final class ClassEvent: Event {
        let room: String
        init(room: String) { self.room = room }
        var eventType: String { room }
    }

    struct Generic<Payload: Sendable>: Event {
        let payload: Payload
        let room: String
        var eventType: String { room }
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

    /// Dispatches `events` on a fresh bus with a subscriber of `key` and one without a key, and
    /// returns what each received, as indexes into `events`.
    static func routed<E: Event>(_ events: [E], key: String) -> (keyed: [Int], unkeyed: [Int]) {
        let bus = EventBus()
        let keyed = Shared<[Int]>([])
        let unkeyed = Shared<[Int]>([])
        let current = Shared(0)
        _ = bus.on(E.self).ofType(key).next { _ in keyed.withLock { $0.append(current.value) } }
        _ = bus.on(E.self).next { _ in unkeyed.withLock { $0.append(current.value) } }
        for (index, event) in events.enumerated() {
            current.withLock { $0 = index }
            bus.dispatch(event)
        }
        return (keyed.value, unkeyed.value)
    }

    @Test("the natural non-optional spelling `var eventType: String { room }` routes to ofType subscribers")
    func nonOptionalRoutes() {
        let (keyed, unkeyed) = Self.routed(
            [NonOptionalKey(room: "room-7"), NonOptionalKey(room: "room-9")], key: "room-7")
        #expect(keyed == [0], "ofType(\"room-7\") receives the room-7 event only")
        #expect(unkeyed == [0, 1])
    }

    @Test(
        "a stored `let eventType: String`, a protocol extension's, a class's and a generic event's non-optional key route"
    )
    func otherNonOptionalSpellingsRoute() {
        #expect(Self.routed([StoredKey(eventType: "k"), StoredKey(eventType: "x")], key: "k").keyed == [0])
        #expect(Self.routed([Joined(room: "k"), Joined(room: "x")], key: "k").keyed == [0])
        #expect(Self.routed([Left(room: "x"), Left(room: "k")], key: "k").keyed == [1])
        #expect(Self.routed([ClassEvent(room: "x"), ClassEvent(room: "k")], key: "k").keyed == [1])
        #expect(Self.routed([Generic(payload: 1, room: "k"), Generic(payload: 2, room: "x")], key: "k").keyed == [0])
    }

    @Test("`var eventType: String?` still routes, nil matching no key")
    func optionalRoutes() {
        let (keyed, unkeyed) = Self.routed(
            [OptionalKey(room: "k"), OptionalKey(room: nil), OptionalKey(room: "x")], key: "k")
        #expect(keyed == [0])
        #expect(unkeyed == [0, 1, 2])
    }

    @Test("an event that declares no key has none: only unkeyed subscribers receive it")
    func noKey() {
        let (keyed, unkeyed) = Self.routed([NoKey(), NoKey()], key: "k")
        #expect(keyed.isEmpty)
        #expect(unkeyed == [0, 1])
        #expect(NoKey().eventType == NoEventTypeKey() && NoKey().routingKey == nil)
    }

    @Test("a String-backed enum conforming to EventRoutingKey routes as its raw value, optional or not")
    func enumKeyRoutes() {
        #expect(Self.routed([Knock(room: .lobby), Knock(room: .kitchen)], key: "lobby").keyed == [0])
        #expect(Self.routed([MaybeKnock(room: nil), MaybeKnock(room: .kitchen)], key: "kitchen").keyed == [1])
    }

    @Test("events held as `any Event` route by their key")
    func existentialsRoute() {
        let bus = EventBus()
        let received = Shared<[String]>([])
        _ = bus.on(NonOptionalKey.self).ofType("k").next { received.append("non-optional \($0.room)") }
        _ = bus.on(Knock.self).ofType("kitchen").next { received.append("knock \($0.room.rawValue)") }
        let events: [any Event] = [
            NonOptionalKey(room: "k"), NonOptionalKey(room: "x"), Knock(room: .kitchen), NoKey(),
        ]
        for event in events { bus.dispatch(event) }
        #expect(received.value == ["non-optional k", "knock kitchen"])
    }
}

extension EventKeyTests.RoomEvent {
    /// A key given by a protocol extension, for every conforming event.
    var eventType: String { room }
}
