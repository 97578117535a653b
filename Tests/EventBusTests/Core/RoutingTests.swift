import Testing

@testable import EventBus
@testable import EventBusFoundation

@Suite("Routing by type and key", .offThePool)
struct RoutingTests {
    @Test("Events are routed by their exact static type: Box<Int> and Box<String> are different events")
    func exactTypeRouting() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Box<Int>.self).next { log.append("int \($0.payload)") }
        _ = bus.on(Box<String>.self).next { log.append("string \($0.payload)") }
        _ = bus.on(Ping.self).next { _ in log.append("ping") }

        bus.dispatch(Box(payload: 1))
        bus.dispatch(Box(payload: "a"))
        bus.dispatch(Pong())

        #expect(log.value == ["int 1", "string a"])
    }

    @Test("A keyed subscriber gets only its key; an unkeyed subscriber gets every event of the type")
    func keyedAndUnkeyed() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Chat.self).ofType("room-7").next { log.append("room-7 got \($0.room ?? "nil")") }
        _ = bus.on(Chat.self).next { log.append("all got \($0.room ?? "nil")") }

        bus.dispatch(Chat(room: "room-7"))
        bus.dispatch(Chat(room: "room-9"))
        bus.dispatch(Chat(room: nil))

        #expect(log.value == ["room-7 got room-7", "all got room-7", "all got room-9", "all got nil"])
    }

    @Test("Several keys on one subscription: each key delivers once, and one dispose ends them all")
    func severalKeysOneToken() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let token = bus.on(Chat.self).ofType("a").ofType("b").ofType("a").next { log.append($0.room ?? "nil") }
        #expect(bus.subscriptionCount == 1)

        for room in ["a", "b", "c"] { bus.dispatch(Chat(room: room)) }
        #expect(log.value == ["a", "b"])

        token.dispose()
        for room in ["a", "b"] { bus.dispatch(Chat(room: room)) }
        #expect(log.value == ["a", "b"])
        #expect(bus.subscriptionCount == 0)
    }

    @Test("The keys a maker gathers: the first inline, the rest in order, each once at registration")
    func subscriptionKeys() {
        var keys = SubscriptionKeys()
        #expect(keys.first == nil)
        #expect(keys.unique.isEmpty)
        keys.append("b")
        #expect(keys.first == "b")
        #expect(keys.others.isEmpty)
        #expect(keys.unique == ["b"])
        for key in ["a", "b", "c", "a"] { keys.append(key) }
        #expect(keys.unique == ["b", "a", "c"])
        #expect(SubscriptionKeys(["x", "y", "x"]).unique == ["x", "y"])
        #expect(SubscriptionKeys([]).first == nil)

        let bus = EventBus()
        let token = bus.on(Chat.self).ofType("b").ofType("a").ofType("b").ofType("c").next { _ in }
        #expect(bus.subscriptions(of: Chat.self).first?.keys == ["b", "a", "c"])
        token.dispose()
        let stream = bus.events(of: Chat.self, ofType: "x", "y", "x")
        #expect(bus.subscriptions(of: Chat.self).first?.keys == ["x", "y"])
        withExtendedLifetime(stream) {}
    }

    @Test("A partly configured maker is a value: kept, it can be finished several ways, and is unchanged by each")
    func makerReuse() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let base = bus.on(Chat.self).priority(.high)
        _ = base.ofType("a").next { _ in log.append("a") }
        _ = base.ofType("b").replayingSticky().next { _ in log.append("b") }
        _ = base.next { _ in log.append("any") }
        _ = bus.on(Chat.self).next { _ in log.append("normal") }

        bus.dispatch(Chat(room: "a"))
        bus.dispatch(Chat(room: "b"))
        bus.dispatch(Chat(room: "c"))

        #expect(log.value == ["a", "any", "normal", "b", "any", "normal", "any", "normal"])
        #expect(bus.subscriptions(of: Chat.self).map(\.keys) == [["a"], ["b"], [], []])
        #expect(bus.subscriptions(of: Chat.self).map(\.priority) == [.high, .high, .high, .normal])
    }

    @Test("Order: the event's keyed subscribers first, in subscription order, then unkeyed ones, in subscription order")
    func deliveryOrder() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Chat.self).next { _ in log.append("unkeyed 1") }
        _ = bus.on(Chat.self).ofType("k").next { _ in log.append("keyed 1") }
        _ = bus.on(Chat.self).next { _ in log.append("unkeyed 2") }
        _ = bus.on(Chat.self).ofType("other").next { _ in log.append("other") }
        _ = bus.on(Chat.self).ofType("k").next { _ in log.append("keyed 2") }

        bus.dispatch(Chat(room: "k"))

        #expect(log.value == ["keyed 1", "keyed 2", "unkeyed 1", "unkeyed 2"])
    }

    @Test("Order survives disposals in the middle of the list")
    func orderAfterDisposals() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let tokens = (0..<6).map { index in bus.on(Ping.self).next { _ in log.append("\(index)") } }
        tokens[0].dispose()
        tokens[3].dispose()
        tokens[5].dispose()
        _ = bus.on(Ping.self).next { _ in log.append("6") }

        bus.dispatch(Ping())

        #expect(log.value == ["1", "2", "4", "6"])
    }

    @Test("A dispatch with no subscriber does nothing")
    func noSubscriber() {
        let bus = EventBus()
        bus.dispatch(Ping())
        bus.dispatch(Chat(room: "nobody"))
        let token = bus.on(Ping.self).next { _ in }
        token.dispose()
        bus.dispatch(Ping())
        #expect(bus.subscriptionCount == 0)
    }
}
