import Dispatch
import EventBus
import Testing

/// Event chains (DESIGN §10), by the number that prefixes each test's name: 1 the route (bottom-up,
/// fixed when the post starts; mounts, weak and provided parents), 2 interceptors (forward, drop,
/// stop), 3 the outcome, 5 queued observers, 6 re-entrancy and bus interplay, 7 tokens and
/// lifetimes, 8 describing the tree.
@Suite("Chains: routing, interceptors, stop, outcome", .offThePool)
struct EventChainTests {
    struct Liked: Event {
        var id = 0
        var key: String? = nil
        var eventType: String? { key }
    }
    struct Statistics: Event {
        var name = ""
        var section = 0
    }

    /// Root ← Container ← Content ← Cell.
    struct Tree {
        let root = EventNode(name: "Root")
        let container = EventNode(name: "Container")
        let content = EventNode(name: "Content")
        let cell = EventNode(name: "Cell")

        init() {
            #expect(container.mount(on: root))
            #expect(content.mount(on: container))
            #expect(cell.mount(on: content))
        }

        var all: [EventNode] { [cell, content, container, root] }
    }

    @Test("1. The route is the node then its ancestors, strictly bottom-up; siblings and descendants never see it")
    func routeIsBottomUp() {
        let tree = Tree()
        let sibling = EventNode(name: "Sibling")
        sibling.mount(on: tree.container)
        let log = Shared<[String]>([])
        var tokens: [EventToken] = []
        for node in tree.all + [sibling] {
            // The name, not the node: a handler that captured its own node would keep it alive.
            tokens.append(node.on(Liked.self).next { [name = node.name] _ in log.append(name) })
        }
        #expect(tree.cell.route == ["Cell", "Content", "Container", "Root"])
        #expect(tree.content.post(Liked()) == .delivered(count: 3))
        #expect(log.value == ["Content", "Container", "Root"])
        log.withLock { $0 = [] }
        tree.cell.post(Liked())
        #expect(log.value == ["Cell", "Content", "Container", "Root"])
        _ = tokens
    }

    @Test("1. The route is fixed when the post starts: mounting and unmounting from a handler affect later posts")
    func routeFixedAtStart() {
        let tree = Tree()
        let log = Shared<[String]>([])
        let other = EventNode(name: "Other")
        _ = other.on(Liked.self).next { _ in log.append("Other") }
        _ = tree.root.on(Liked.self).next { _ in log.append("Root") }
        _ = tree.cell.on(Liked.self).next { [weak cell = tree.cell] _ in
            log.append("Cell")
            cell?.mount(on: other)
        }
        tree.cell.post(Liked())
        #expect(log.value == ["Cell", "Root"])
        tree.cell.post(Liked())
        #expect(log.value == ["Cell", "Root", "Cell", "Other"])
    }

    @Test("1. mount refuses cycles; remounting moves the node with its subtree; unmount makes a root")
    func mountRules() {
        let tree = Tree()
        #expect(!tree.root.mount(on: tree.cell))
        #expect(!tree.container.mount(on: tree.container))
        #expect(!tree.container.mount(on: tree.content))
        #expect(tree.root.route == ["Root"])
        let other = EventNode(name: "Other")
        #expect(tree.content.mount(on: other))
        #expect(tree.cell.route == ["Cell", "Content", "Other"])
        tree.content.unmount()
        #expect(tree.cell.route == ["Cell", "Content"])
        tree.content.unmount()  // idempotent
        #expect(tree.content.route == ["Content"])
    }

    @Test("1. The parent is held weakly: a dead parent makes the node a root")
    func weakParent() {
        let cell = EventNode(name: "Cell")
        var parent: EventNode? = EventNode(name: "Parent")
        let watch = WeakReference(parent!)
        cell.mount(on: parent!)
        #expect(cell.route == ["Cell", "Parent"])
        parent = nil
        #expect(watch.object == nil)
        #expect(cell.route == ["Cell"])
        #expect(cell.post(Liked()) == .unhandled)
    }

    @Test("1. A provided parent is asked at post time; a mounted parent wins; a provided cycle ends the route")
    func providedParent() {
        let first = EventNode(name: "First")
        let second = EventNode(name: "Second")
        let current = Shared<EventNode?>(first)
        let asked = Shared(0)
        let child = EventNode(name: "Child") {
            asked.increment()
            return current.value
        }
        #expect(child.route == ["Child", "First"])
        current.withLock { $0 = second }
        let log = Shared<[String]>([])
        _ = second.on(Liked.self).next { _ in log.append("Second") }
        #expect(child.post(Liked()) == .delivered(count: 1))
        #expect(log.value == ["Second"])
        #expect(asked.value == 2)
        // A mounted parent takes precedence.
        child.mount(on: first)
        #expect(child.route == ["Child", "First"])
        #expect(asked.value == 2)
        child.unmount()
        // A provided parent that leads back into the route: the route ends there.
        let loop = EventNode(name: "Loop") { child }
        current.withLock { $0 = loop }
        #expect(child.route == ["Child", "Loop"])
        // A mounted node under a provided edge that climbs back: also ends.
        current.withLock { $0 = second }
        second.mount(on: child)
        #expect(child.route == ["Child", "Second"])
    }

    @Test("1. A provided parent that captures a node mounted below its own node leaks nothing once both go")
    func providedParentCapturingADescendant() {
        var node: EventNode?
        let watchBelow: WeakReference
        do {
            let holder = Shared<EventNode?>(nil)
            node = EventNode(name: "Node") { holder.value }
            let below = EventNode(name: "Below")
            below.mount(on: node!)
            holder.withLock { $0 = below }  // only the closure holds the holder now
            watchBelow = WeakReference(below)
            #expect(node!.route == ["Node", "Below"])
        }
        #expect(watchBelow.object != nil, "kept by the provided parent")
        node = nil
        #expect(watchBelow.object == nil, "the node's deallocation lets its provided parent go")
    }

    @Test("2. Interceptors run first, in registration order; forward changes the event for this node and above")
    func interceptorsForward() {
        let tree = Tree()
        let log = Shared<[String]>([])
        _ = tree.content.on(Statistics.self).next { log.append("content \($0.section)") }
        _ = tree.container.on(Statistics.self).priority(.high).next { log.append("container \($0.section)") }
        _ = tree.container.intercept(Statistics.self) { event in
            log.append("intercept 1 \(event.section)")
            var event = event
            event.section = 3
            return .forward(event)
        }
        _ = tree.container.intercept(Statistics.self) { event in
            log.append("intercept 2 \(event.section)")
            var event = event
            event.name += "!"
            return .forward(event)
        }
        _ = tree.root.on(Statistics.self).next { log.append("root \($0.section) \($0.name)") }
        #expect(tree.cell.post(Statistics(name: "tap")) == .delivered(count: 3))
        #expect(
            log.value == ["content 0", "intercept 1 0", "intercept 2 3", "container 3", "root 3 tap!"])
    }

    @Test("2. drop ends the event: no handler sees it from there on, monitors (there and above) still do")
    func interceptorDrop() {
        let tree = Tree()
        let log = Shared<[String]>([])
        _ = tree.content.on(Statistics.self).next { _ in log.append("content") }
        _ = tree.container.intercept(Statistics.self) { _ in .drop }
        _ = tree.container.intercept(Statistics.self) { _ in
            log.append("second interceptor")
            return .forward(Statistics())
        }
        _ = tree.container.on(Statistics.self).next { _ in log.append("container handler") }
        _ = tree.container.on(Statistics.self).monitor().next { _ in log.append("container monitor") }
        _ = tree.root.on(Statistics.self).next { _ in log.append("root handler") }
        _ = tree.root.on(Statistics.self).monitor().next { _ in log.append("root monitor") }
        #expect(tree.cell.post(Statistics()) == .dropped(atDepth: 2, delivered: 3))
        #expect(log.value == ["content", "container monitor", "root monitor"])
    }

    @Test("2. stop finishes its node as the bus does, then only monitors see it above")
    func stop() {
        let tree = Tree()
        let log = Shared<[String]>([])
        _ = tree.content.on(Liked.self).priority(.high).handle { _ in
            log.append("content stops")
            return .stop
        }
        _ = tree.content.on(Liked.self).next { _ in log.append("content normal") }
        _ = tree.content.on(Liked.self).monitor().next { _ in log.append("content monitor") }
        _ = tree.container.intercept(Liked.self) { event in
            log.append("container interceptor")
            return .forward(event)
        }
        _ = tree.container.on(Liked.self).next { _ in log.append("container handler") }
        _ = tree.root.on(Liked.self).monitor().atQueue(.global()).next { _ in log.append("root queued monitor") }
        let outcome = tree.cell.post(Liked())
        #expect(outcome == .stopped(atDepth: 1, delivered: 3))
        #expect(waitUntil { log.value.count == 3 })
        #expect(log.value == ["content stops", "content monitor", "root queued monitor"])
    }

    @Test("3. The outcome: delivered n, stopped at, dropped at, or unhandled (a default action can run)")
    func outcome() {
        let tree = Tree()
        #expect(tree.cell.post(Liked()) == .unhandled)
        #expect(tree.cell.post(Liked()).isUnhandled)
        let token = tree.root.on(Liked.self).ofType("a").next { _ in }
        #expect(tree.cell.post(Liked(key: "b")) == .unhandled)
        #expect(tree.cell.post(Liked(key: "a")) == .delivered(count: 1))
        #expect(tree.cell.post(Liked(key: "a")).delivered == 1)
        token.dispose()
        #expect(tree.cell.post(Liked(key: "a")) == .unhandled)
        let stop = tree.cell.on(Liked.self).handle { _ in .stop }
        #expect(tree.cell.post(Liked()) == .stopped(atDepth: 0, delivered: 1))
        stop.dispose()
        let drop = tree.root.intercept(Liked.self) { _ in .drop }
        #expect(tree.cell.post(Liked()) == .dropped(atDepth: 3, delivered: 0))
        #expect(tree.cell.post(Liked()).delivered == 0)
        drop.dispose()
    }

    @Test("5. Observers on queues are enqueued in route order")
    func queuedObserversInRouteOrder() {
        let tree = Tree()
        let queue = DispatchQueue(label: "chain.observers")
        let log = Shared<[String]>([])
        for node in tree.all.reversed() {
            _ = node.on(Liked.self).atQueue(queue).next { [name = node.name] _ in log.append(name) }
        }
        #expect(tree.cell.post(Liked()) == .delivered(count: 4))
        #expect(drain(queue))
        #expect(log.value == ["Cell", "Content", "Container", "Root"])
    }

    @Test("7. Tokens, bags, freeWith, ofType and priorities are the bus's")
    func tokensAndBags() {
        let tree = Tree()
        let count = Shared(0)
        let bag = DisposeBag()
        tree.root.on(Liked.self).next { _ in count.increment() }.disposed(by: bag)
        tree.container.intercept(Liked.self) { .forward($0) }.disposed(by: bag)
        #expect(bag.count == 2)
        tree.cell.post(Liked())
        #expect(count.value == 1)
        bag.dispose()
        #expect(tree.cell.post(Liked()) == .unhandled)
        var owner: Sentinel? = Sentinel()
        tree.root.on(Liked.self).freeWith(owner).next { _, _ in count.increment() }
        tree.cell.post(Liked())
        #expect(count.value == 2)
        owner = nil
        #expect(tree.cell.post(Liked()) == .unhandled)
        #expect(tree.root.subscriptionCount == 0)
    }

    @Test("7. owner → node → handlers never keeps the owner; a node's deallocation ends its subscriptions")
    func noRetainCycles() {
        final class Screen: EventNodeOwner, Sendable {
            let eventNode = EventNode(name: "Screen")
            let hits = Shared(0)
            init(parent: EventNode) {
                mount(on: Parent(eventNode: parent))
                on(Liked.self).next { owner, _ in owner.hits.increment() }
                eventNode.on(Liked.self).freeWith(self).handle { owner, _ in
                    owner.hits.increment()
                    return .continue
                }
                _ = eventNode.intercept(Liked.self) { .forward($0) }
            }
        }
        final class Parent: EventNodeOwner {
            let eventNode: EventNode
            init(eventNode: EventNode) { self.eventNode = eventNode }
        }
        let root = EventNode(name: "Root")
        var screen: Screen? = Screen(parent: root)
        let watch = WeakReference(screen!)
        let node = WeakReference(screen!.eventNode)
        #expect(screen!.eventNode.post(Liked()) == .delivered(count: 2))
        #expect(screen!.hits.value == 2)
        let handlerAlive = subscribeCapturingSentinel { (handler: @escaping @Sendable (Liked) -> Void) in
            _ = screen!.eventNode.on(Liked.self).next(handler)
        }
        #expect(root.treeDescription == "Root\n  Screen")
        screen = nil
        #expect(watch.object == nil)
        #expect(node.object == nil)
        #expect(!handlerAlive())
        #expect(root.treeDescription == "Root")
    }

    @Test("7. A node deallocated by a handler during a post: that post still reaches it, then its subscriptions end")
    func nodeDeallocatedDuringPost() {
        let root = EventNode(name: "Root")
        let middle = Shared<EventNode?>(EventNode(name: "Middle"))
        let cell = EventNode(name: "Cell")
        middle.value!.mount(on: root)
        cell.mount(on: middle.value!)
        let watch = WeakReference(middle.value!)
        let reached = Shared(0)
        // More subscribers than a dispatch takes in one chunk: the walk over them resumes after
        // the node is gone.
        let tokens = (0..<100).map { _ in middle.value!.on(Liked.self).next { _ in reached.increment() } }
        let cellToken = cell.on(Liked.self).next { _ in
            // The last reference goes, outside the test's lock.
            _ = middle.withLock { node -> EventNode? in
                defer { node = nil }
                return node
            }
        }
        let rootHits = Shared(0)
        let rootToken = root.on(Liked.self).next { _ in rootHits.increment() }
        #expect(cell.post(Liked()) == .delivered(count: 102))
        #expect(watch.object == nil, "the node was released by the handler")
        #expect(reached.value == 100)
        #expect(tokens.allSatisfy { $0.isDisposed }, "the dead node's subscriptions ended after the post")
        #expect(cell.route == ["Cell"], "the dead node's child became a root")
        #expect(cell.post(Liked()) == .delivered(count: 1))
        #expect(rootHits.value == 1)
        cellToken.dispose()
        rootToken.dispose()
    }

    @Test("6. Posting, mounting, unmounting and disposing from inside handlers are safe")
    func reentrancy() {
        let tree = Tree()
        let log = Shared<[String]>([])
        let disposable = Shared<EventToken?>(nil)
        // Weakly: a handler that captured its own node would keep it alive.
        _ = tree.content.on(Liked.self).next {
            [weak cell = tree.cell, weak content = tree.content, weak container = tree.container] event in
            guard event.id == 0, let cell, let content, let container else { return }
            log.append("content")
            cell.post(Liked(id: 1))  // nested, depth-first
            content.unmount()
            content.mount(on: container)
            disposable.value?.dispose()
        }
        disposable.withLock { value in
            value = tree.container.on(Liked.self).next { log.append("container \($0.id)") }
        }
        _ = tree.root.on(Liked.self).next { [weak root = tree.root] event in
            log.append("root \(event.id)")
            // Not for the post reaching the root now; for one that has not reached it yet, yes.
            _ = root?.on(Liked.self).next { log.append("late \($0.id)") }
        }
        tree.cell.post(Liked())
        #expect(log.value == ["content", "container 1", "root 1", "root 0", "late 0"])
    }

    @Test("6. A bus subscriber posts into a chain; forward(_:to:) re-dispatches on a bus")
    func busBridges() {
        let tree = Tree()
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(Liked.self).next { log.append("bus \($0.id)") }
        let forwarding = tree.container.forward(Liked.self, to: bus)
        _ = tree.root.on(Statistics.self).next { _ in log.append("root statistics") }
        _ = bus.on(Statistics.self).next { tree.cell.post($0) }
        tree.cell.post(Liked(id: 4))
        bus.dispatch(Statistics())
        #expect(log.value == ["bus 4", "root statistics"])
        forwarding.dispose()
        tree.cell.post(Liked(id: 5))
        #expect(log.value.count == 2)
    }

    @Test("8. route and treeDescription describe the tree")
    func introspection() {
        let tree = Tree()
        EventNode(name: "Gone").mount(on: tree.root)  // deallocated at once: not listed
        let sibling = EventNode(name: "Sibling")
        sibling.mount(on: tree.container)
        #expect(tree.cell.route == ["Cell", "Content", "Container", "Root"])
        #expect(tree.root.treeDescription == "Root\n  Container\n    Content\n      Cell\n    Sibling")
        #expect(tree.content.treeDescription == "Content\n  Cell")
    }
}
