import EventBus
import Testing

/// DESIGN §7: supertypes without reflection.
@Suite("Policies: supertypes", .tags(.stress), .offThePool)
struct SupertypeTests {
    protocol ChatActivity: Sendable { var room: String { get } }
    protocol Loud: Sendable {}

    struct MessageSent: Event, ChatActivity, Loud, DeliveredAsSupertypes {
        let room: String
        var eventType: String? { room }
        static let supertypes: [Supertype<Self>] = [
            .as((any ChatActivity).self) { $0 },
            .as((any Loud).self) { $0 },
        ]
    }

    struct Typing: Event, ChatActivity, DeliveredAsSupertypes {
        let room: String
        static let supertypes: [Supertype<Self>] = [.as((any ChatActivity).self) { $0 }]
    }

    @Test("An event reaches its own subscribers, then each supertype's, in declared order; the key applies")
    func deliveredAsSupertypes() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(anyOf: (any Loud).self).next { _ in log.append("loud") }
        _ = bus.on(anyOf: (any ChatActivity).self).next { log.append("activity \($0.room)") }
        _ = bus.on(anyOf: (any ChatActivity).self).ofType("7").next { log.append("activity in 7: \($0.room)") }
        _ = bus.on(MessageSent.self).next { log.append("sent \($0.room)") }

        bus.dispatch(MessageSent(room: "7"))
        bus.dispatch(MessageSent(room: "8"))
        bus.dispatch(Typing(room: "7"))  // no key: only unkeyed supertype subscribers

        #expect(
            log.value == [
                "sent 7", "activity in 7: 7", "activity 7", "loud",
                "sent 8", "activity 8", "loud",
                "activity 7",
            ])
    }

    @Test("The conversion runs only when its supertype has subscribers")
    func conversionOnlyWithSubscribers() {
        let conversions = Shared(0)
        struct Counted: Event, ChatActivity, DeliveredAsSupertypes {
            var room: String { "r" }
            nonisolated(unsafe) static var counter: Shared<Int>?  // set once, before any dispatch
            static var supertypes: [Supertype<Self>] {
                [
                    .as((any ChatActivity).self) { event in
                        counter?.increment()
                        return event
                    }
                ]
            }
        }
        Counted.counter = conversions
        let bus = EventBus()
        bus.dispatch(Counted())
        #expect(conversions.value == 0)
        let token = bus.on(anyOf: (any ChatActivity).self).next { _ in }
        bus.dispatch(Counted())
        #expect(conversions.value == 1)
        token.dispose()
        bus.dispatch(Counted())
        #expect(conversions.value == 1)
    }

    @Test("A stop covers the supertypes' handlers; their monitors still run")
    func stopCoversSupertypes() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(MessageSent.self).handle { _ in
            log.append("stopper")
            return .stop
        }
        _ = bus.on(anyOf: (any ChatActivity).self).next { _ in log.append("activity handler") }
        _ = bus.on(anyOf: (any ChatActivity).self).monitor().next { _ in log.append("activity monitor") }
        bus.dispatch(MessageSent(room: "1"))
        #expect(log.value == ["stopper", "activity monitor"])
    }

    @Test("A generic event's wildcard: Box<T> delivered as AnyBox for every T")
    func genericWildcard() {
        let bus = EventBus()
        let seen = Shared<[String]>([])
        _ = bus.on(anyOf: (any AnyPayload).self).next { seen.append($0.describe) }
        bus.dispatch(Payload(value: 1))
        bus.dispatch(Payload(value: "two"))
        #expect(seen.value == ["1", "two"])
        #expect(bus.subscriptionCount(of: (any AnyPayload).self) == 1)
    }

    @Test("Supertype subscribers count as deliveries: not a dead event")
    func supertypeIsNotDead() {
        let bus = EventBus()
        let dead = Shared(0)
        bus.deadEventHandler = { _ in dead.increment() }
        _ = bus.on(anyOf: (any ChatActivity).self).next { _ in }
        bus.dispatch(Typing(room: "1"))
        #expect(dead.value == 0)
        bus.dispatch(Ping())
        #expect(dead.value == 1)
    }
}

protocol AnyPayload: Sendable { var describe: String { get } }

struct Payload<T: Sendable>: Event, AnyPayload, DeliveredAsSupertypes {
    let value: T
    var describe: String { "\(value)" }
    static var supertypes: [Supertype<Self>] { [.as((any AnyPayload).self) { $0 }] }
}
