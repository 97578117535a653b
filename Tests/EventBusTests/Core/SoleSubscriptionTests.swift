import Testing

@testable import EventBus

/// A type with a single subscription linked is dispatched to without walking its lists (the
/// dispatch plan's shortcut): it must route exactly as a walk would, for every key, level, limit
/// and lifetime.
@Suite("Routing: a type with one subscription", .offThePool)
struct SoleSubscriptionTests {
    protocol Shape: Sendable { var name: String { get } }

    struct Square: Event, Shape, DeliveredAsSupertypes {
        var name = "square"
        static let supertypes: [Supertype<Self>] = [.as((any Shape).self) { $0 }]
    }

    @Test("A lone keyed subscription gets its key only; a lone unkeyed one gets every key")
    func keys() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let keyed = bus.on(Chat.self).ofType("a").next { log.append("keyed \($0.room ?? "nil")") }
        for room in ["a", "b", nil] { bus.dispatch(Chat(room: room)) }
        #expect(log.value == ["keyed a"])

        keyed.dispose()
        _ = bus.on(Chat.self).next { log.append("unkeyed \($0.room ?? "nil")") }
        for room in ["a", "b", nil] { bus.dispatch(Chat(room: room)) }
        #expect(log.value == ["keyed a", "unkeyed a", "unkeyed b", "unkeyed nil"])
    }

    @Test("A lone subscription at a priority, or a lone monitor, is delivered to")
    func levels() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let high = bus.on(Ping.self).priority(.high).next { _ in log.append("high") }
        bus.dispatch(Ping())
        high.dispose()
        _ = bus.on(Ping.self).monitor().next { _ in log.append("monitor") }
        bus.dispatch(Ping())
        #expect(log.value == ["high", "monitor"])
    }

    @Test("A lone subscription disposed, or disposed and replaced, is handled as the walk would")
    func disposed() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        bus.on(Ping.self).next { _ in log.append("first") }.dispose()
        bus.dispatch(Ping())
        _ = bus.on(Ping.self).next { _ in log.append("second") }
        bus.dispatch(Ping())
        #expect(log.value == ["second"])
        #expect(bus.subscriptionCount(of: Ping.self) == 1)
    }

    @Test("A subscription made by a handler misses the event, even as its type's only subscription")
    func subscribedDuringTheDispatch() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        // The supertype's walk starts after the exact type's handler subscribed to the supertype:
        // the only subscription it finds is newer than the dispatch.
        _ = bus.on(Square.self).next { [unowned bus] _ in
            log.append("square")
            _ = bus.on(anyOf: (any Shape).self).next { log.append("shape \($0.name)") }
        }
        bus.dispatch(Square())
        #expect(log.value == ["square"])
        bus.dispatch(Square(name: "second"))
        #expect(log.value == ["square", "square", "shape second"])
    }

    @Test("A lone monitor of a type with supertypes is delivered to after the supertypes' handlers")
    func loneMonitorAfterSupertypes() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Square.self).monitor().next { _ in log.append("square monitor") }
        _ = bus.on(anyOf: (any Shape).self).next { log.append("shape \($0.name)") }
        bus.dispatch(Square())
        #expect(log.value == ["shape square", "square monitor"])
    }

    @Test("An event kept until delivered stays kept when the lone subscription has another key")
    func keptUntilDelivered() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Chat.self).ofType("a").next { log.append("a got \($0.text)") }
        bus.dispatch(Chat(room: "b", text: "for b"), sticky: .untilDelivered)
        _ = bus.on(Chat.self).ofType("b").replayingSticky().next { log.append("b got \($0.text)") }
        bus.dispatch(Chat(room: "a", text: "for a"), sticky: .untilDelivered)
        _ = bus.on(Chat.self).ofType("a").replayingSticky().next { log.append("late a got \($0.text)") }
        #expect(log.value == ["b got for b", "a got for a"])
    }

    @Test("A lone unkeyed subscription misses what a hook delivers to its key's subscribers only")
    func keyedDeliveryOnly() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Chat.self).next { log.append("unkeyed \($0.room ?? "nil")") }
        bus.deliverToKeyed(Chat(room: "a"), key: "a")
        bus.deliver(Chat(room: "b"), key: "b")
        #expect(log.value == ["unkeyed b"])
    }

    @Test("A lone subscription whose owner is gone is reclaimed, not delivered to")
    func ownerGone() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        var owner: Screen? = Screen("owner", log: log)
        _ = bus.on(Ping.self).freeWith(owner!).next { _, _ in log.append("owned") }
        bus.dispatch(Ping())
        owner = nil
        bus.dispatch(Ping())
        #expect(log.value == ["owned"])
        #expect(bus.subscriptionCount(of: Ping.self) == 0)
    }
}
