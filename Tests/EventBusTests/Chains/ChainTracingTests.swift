import EventBus
import Testing

/// What a chain node shows of itself (its subscriptions) and reports to its tracer (chain hops,
/// subscriptions made and ended, handler errors).
@Suite("Chains: introspection and tracing", .offThePool)
struct ChainTracingTests {
    struct Liked: Event { var id = 0 }
    struct FetchName: Request { typealias Response = String }

    /// Root ← Container ← Cell, every node traced into one log.
    struct TracedTree {
        let root = EventNode(name: "Root")
        let container = EventNode(name: "Container")
        let cell = EventNode(name: "Cell")
        let hops = Shared<[TraceRecord.ChainHop]>([])
        let others = Shared<[String]>([])

        init() {
            container.mount(on: root)
            cell.mount(on: container)
            let (hops, others) = (hops, others)
            for node in [root, container, cell] {
                node.tracer = { record in
                    if case .chainHop(let hop) = record {
                        hops.withLock { $0.append(hop) }
                    } else {
                        others.append("\(record)")
                    }
                }
            }
        }
    }

    @Test("each node a post passes reports a hop: depth, deliveries there, and passed/stopped/ended")
    func hopsOfAStoppedPost() {
        let tree = TracedTree()
        let tokens = [
            tree.cell.on(Liked.self).next { _ in },
            tree.container.on(Liked.self).handle { _ in .stop },
            tree.root.on(Liked.self).next { _ in Issue.record("stopped below") },
            tree.root.on(Liked.self).monitor().next { _ in },
        ]
        defer { for token in tokens { token.dispose() } }
        #expect(tree.cell.post(Liked()) == .stopped(atDepth: 1, delivered: 3))
        let hops = tree.hops.value
        #expect(hops.map(\.node) == ["Cell", "Container", "Root"])
        #expect(hops.map(\.depth) == [0, 1, 2])
        #expect(hops.map(\.delivered) == [1, 1, 1])
        #expect(hops.map(\.status) == [.passed, .stopped, .ended])
        #expect(hops.allSatisfy { $0.type == Liked.self && $0.typeName.hasSuffix("Liked") })
        #expect(hops[1].description.hasSuffix("Liked at Container (depth 1): 1 delivered, stopped"))
    }

    @Test("a drop is reported where it happened; nodes with nothing for the event still report their hop")
    func hopsOfADroppedPost() {
        let tree = TracedTree()
        let token = tree.container.intercept(Liked.self) { _ in .drop }
        defer { token.dispose() }
        #expect(tree.cell.post(Liked()) == .dropped(atDepth: 1, delivered: 0))
        #expect(tree.hops.value.map(\.status) == [.passed, .dropped, .ended])
        #expect(tree.hops.value.map(\.delivered) == [0, 0, 0])
    }

    @Test("a node without a tracer reports nothing; removing the tracer stops the records")
    func untracedNodesAreSilent() {
        let tree = TracedTree()
        tree.container.tracer = nil
        tree.cell.post(Liked())
        #expect(tree.hops.value.map(\.node) == ["Cell", "Root"])
        tree.cell.tracer = nil
        tree.root.tracer = nil
        tree.cell.post(Liked())
        #expect(tree.hops.value.count == 2)
    }

    @Test("subscriptions list interceptors and answerers by what they carry; the tracer sees them made and ended")
    func subscriptionsAndTheirRecords() {
        let tree = TracedTree()
        let interceptor = tree.container.intercept(Liked.self) { .forward($0) }
        let answerer = tree.container.answer(FetchName.self) { _ in .answer("x") }
        let handler = tree.container.on(Liked.self).next { _ in }
        let infos = tree.container.subscriptions
        #expect(
            infos.map(\.typeName) == [
                "intercept(\(String(reflecting: Liked.self)))", "answer(\(String(reflecting: FetchName.self)))",
                String(reflecting: Liked.self),
            ])
        #expect(infos.allSatisfy { $0.callSite.contains("ChainTracingTests.swift") })
        #expect(tree.root.subscriptions.isEmpty)
        for token in [interceptor, answerer, handler] { token.dispose() }
        #expect(tree.container.subscriptions.isEmpty)
        let others = tree.others.value
        #expect(others.count == 6, "\(others)")
        #expect(others.first?.hasPrefix("subscribed #") == true)
        #expect(others.contains { $0.contains("ended #") && $0.contains("intercept(") && $0.contains("(disposed)") })
    }

    @Test("a main-actor node traces its hops and lists its subscriptions")
    @MainActor
    func mainActorNode() {
        let root = MainActorEventNode(name: "Root")
        let cell = MainActorEventNode(name: "Cell")
        cell.mount(on: root)
        let hops = Shared<[String]>([])
        root.tracer = { record in
            if case .chainHop(let hop) = record { hops.append("\(hop.node) \(hop.depth) \(hop.status)") }
        }
        let token = root.on(Liked.self).handle { _ in .stop }
        #expect(root.subscriptionCount == 1)
        #expect(root.subscriptions.map(\.delivery) == [.mainActor])
        #expect(cell.postNow(Liked()) == .stopped(atDepth: 1, delivered: 1))
        #expect(hops.value == ["Root 1 stopped"])
        token.dispose()
        #expect(root.subscriptions.isEmpty)
    }

    @Test("a main-actor node forwards what reaches it to a bus within the post; a stopped event is not forwarded")
    @MainActor
    func mainActorNodeForwards() {
        let bus = EventBus()
        let root = MainActorEventNode(name: "Root")
        let cell = MainActorEventNode(name: "Cell")
        cell.mount(on: root)
        let forwarded = Shared(0)
        let seen = bus.on(Liked.self).next { _ in forwarded.increment() }
        let forwarding = root.forward(Liked.self, to: bus)
        cell.postNow(Liked())
        #expect(forwarded.value == 1, "re-dispatched within the post, on the main queue")
        let stopper = cell.on(Liked.self).handle { _ in .stop }
        cell.postNow(Liked())
        #expect(forwarded.value == 1)
        for token in [seen, forwarding, stopper] { token.dispose() }
    }
}
