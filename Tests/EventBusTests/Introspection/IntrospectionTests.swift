import Dispatch
import Testing

@_spi(Integrations) @testable import EventBus

@Suite("Introspection: who listens to what, from where", .tags(.stress), .offThePool)
struct IntrospectionTests {
    struct Login: Event { let userID: String }
    struct Chat: Event {
        let room: String
        var eventType: String? { room }
    }
    final class Screen: Sendable {}

    @Test("subscriptions lists each live subscription with its type, keys, delivery, priority, owner and call site")
    func listsSubscriptions() throws {
        let bus = EventBus()
        let screen = Screen()
        let line = #line + 1
        let plain = bus.on(Login.self).next { _ in }
        let keyed = bus.on(Chat.self).ofType("7").ofType("8").priority(.high).monitor().next { _ in }
        let owned = bus.on(Login.self).atQueue(DispatchQueue(label: "work")).freeWith(screen).next { _, _ in }
        let infos = bus.subscriptions
        #expect(infos.map(\.id) == [plain.id, keyed.id, owned.id])
        let first = try #require(infos.first)
        #expect(first.typeName.hasSuffix("IntrospectionTests.Login"))
        #expect(first.keys.isEmpty && first.delivery == .synchronous && first.priority == .normal)
        #expect(first.callSite == "EventBusTests/IntrospectionTests.swift:\(line)")
        #expect(first.ownerType == nil && first.isOwnerAlive == nil && !first.isInternal)
        #expect(infos[1].keys == ["7", "8"] && infos[1].priority == .high && infos[1].isMonitor)
        #expect(infos[2].delivery == .queue(label: "work"))
        #expect(infos[2].ownerType?.hasSuffix("Screen") == true && infos[2].isOwnerAlive == true)
        #expect(infos[2].description.contains("queue \"work\", normal, owner"))
        #expect(bus.subscriptions(of: Chat.self).map(\.id) == [keyed.id])
        withExtendedLifetime(screen) {}
        for token in [plain, keyed, owned] { token.dispose() }
        #expect(bus.subscriptions.isEmpty)
    }

    @Test("token.info describes the subscription until it ends; a gone owner shows as gone")
    func tokenInfo() {
        let bus = EventBus()
        var screen: Screen? = Screen()
        let token = bus.on(Login.self).freeWith(screen).next { _, _ in }
        #expect(token.info?.isOwnerAlive == true)
        screen = nil
        #expect(token.info?.isOwnerAlive == false)
        #expect(token.info?.description.contains("(gone)") == true)
        bus.purge()
        #expect(token.info == nil)
    }

    @Test("internal subscriptions are listed as such and left out of the counts")
    func internalSubscriptions() {
        let bus = EventBus()
        let inner = bus.on(Login.self).markedInternal().next { _ in }
        let user = bus.on(Login.self).next { _ in }
        #expect(bus.subscriptionCount == 1 && bus.subscriptionCount(of: Login.self) == 1)
        #expect(bus.subscriptions.map(\.isInternal) == [true, false])
        #expect(bus.subscriptions.first?.description.hasSuffix("[internal]") == true)
        inner.dispose()
        #expect(bus.subscriptionCount == 1)
        user.dispose()
        #expect(bus.subscriptionCount == 0)
    }

    @Test("a snapshot of 20,000 subscriptions lists each once, in subscription order")
    func largeSnapshot() {
        let bus = EventBus()
        let tokens = (0..<20_000).map { i in
            i % 2 == 0 ? bus.on(Login.self).next { _ in } : bus.on(Chat.self).ofType("\(i % 7)").next { _ in }
        }
        for token in tokens.prefix(1000) { token.dispose() }
        let infos = bus.subscriptions
        #expect(infos.count == 19_000)
        #expect(infos.map(\.id) == tokens.dropFirst(1000).map(\.id))
        #expect(bus.subscriptions(of: Chat.self).count == 9_500)
        print("introspection: 20,000 subscriptions made, 1,000 disposed, \(infos.count) listed in order")
        for token in tokens { token.dispose() }
    }
}
