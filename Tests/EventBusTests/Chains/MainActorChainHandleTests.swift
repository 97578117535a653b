import Dispatch
import Testing

@testable import EventBus

/// `handle` on a main-actor chain: a `@MainActor` `handle`'s `.stop` ends its node's later
/// handlers and the nodes above (the post always runs on the main queue); owner-bound and throwing
/// forms; off the main queue the handler is enqueued and its stop does not apply.
@Suite("Chains: handle on main-actor nodes", .offThePool)
struct MainActorChainHandleTests {
    struct BackTapped: Event { var id = 0 }
    struct Refused: Error {}

    @MainActor final class Drawer {
        var isOpen = true
        var closed: [Int] = []
    }

    @MainActor static func chain() -> (root: MainActorEventNode, list: MainActorEventNode, cell: MainActorEventNode) {
        let root = MainActorEventNode(name: "Root")
        let list = MainActorEventNode(name: "List")
        let cell = MainActorEventNode(name: "Cell")
        list.mount(on: root)
        cell.mount(on: list)
        return (root, list, cell)
    }

    @Test("A @MainActor handle's .stop ends its node's later handlers and the nodes above; monitors still see it")
    @MainActor
    func stopEndsNodesAbove() {
        let (root, list, cell) = Self.chain()
        let log = Shared<[String]>([])
        let drawer = Drawer()  // stops while open
        let bag = DisposeBag()
        list.on(BackTapped.self).priority(.high).handle { event in
            log.append("list handle \(event.id)")
            return drawer.isOpen ? .stop : .continue
        }.disposed(by: bag)
        list.on(BackTapped.self).next { event in log.append("list next \(event.id)") }.disposed(by: bag)
        list.on(BackTapped.self).monitor().next { event in log.append("list monitor \(event.id)") }.disposed(by: bag)
        root.on(BackTapped.self).next { event in log.append("root next \(event.id)") }.disposed(by: bag)
        root.on(BackTapped.self).monitor().next { event in log.append("root monitor \(event.id)") }.disposed(by: bag)

        #expect(cell.postNow(BackTapped(id: 1)) == .stopped(atDepth: 1, delivered: 3))
        #expect(log.value == ["list handle 1", "list monitor 1", "root monitor 1"])
        log.withLock { $0 = [] }
        drawer.isOpen = false
        #expect(cell.postNow(BackTapped(id: 2)) == .delivered(count: 5))
        #expect(log.value == ["list handle 2", "list next 2", "list monitor 2", "root next 2", "root monitor 2"])
        log.withLock { $0 = [] }
        drawer.isOpen = true
        cell.post(BackTapped(id: 3))  // on the main queue: delivered at once, stop included
        #expect(log.value == ["list handle 3", "list monitor 3", "root monitor 3"])
        withExtendedLifetime(bag) {}
    }

    @Test("A post from another thread hops to the main queue, where the stop applies")
    func stopFromBackgroundPost() async {
        let (root, list, cell) = await Self.chain()
        let log = Shared<[String]>([])
        let offMain = Shared(0)
        let tokens = await MainActor.run {
            [
                list.on(BackTapped.self).handle { event in
                    if !isOnMainQueue { offMain.increment() }
                    return event.id.isMultiple(of: 2) ? .stop : .continue
                },
                root.on(BackTapped.self).next { event in log.append("root \(event.id)") },
                root.on(BackTapped.self).monitor().next { event in log.append("monitor \(event.id)") },
            ]
        }
        #expect(onAnotherThread { for id in 0..<6 { cell.post(BackTapped(id: id)) } })
        #expect(await waitUntil { log.value.count == 9 })
        #expect(
            log.value == [
                "monitor 0", "root 1", "monitor 1", "monitor 2", "root 3", "monitor 3", "monitor 4", "root 5",
                "monitor 5",
            ])
        #expect(offMain.value == 0)
        for token in tokens { token.dispose() }
    }

    @Test("An owner-bound handle receives its owner, and ends when the owner is deallocated")
    @MainActor
    func ownerBoundHandle() {
        let (root, list, cell) = Self.chain()
        var drawer: Drawer? = Drawer()
        let rootSaw = Shared<[Int]>([])
        let rootToken = root.on(BackTapped.self).next { event in rootSaw.withLock { $0.append(event.id) } }
        list.on(BackTapped.self).freeWith(drawer).handle { drawer, event in
            guard drawer.isOpen else { return .continue }
            drawer.isOpen = false
            drawer.closed.append(event.id)
            return .stop
        }
        #expect(list.node.subscriptionCount == 1)
        #expect(cell.postNow(BackTapped(id: 1)) == .stopped(atDepth: 1, delivered: 1))
        #expect(cell.postNow(BackTapped(id: 2)) == .delivered(count: 2))  // closed: passed on
        #expect(drawer?.closed == [1])
        #expect(rootSaw.value == [2])
        drawer!.isOpen = true
        let watch = WeakReference(drawer!)
        drawer = nil
        #expect(watch.object == nil)  // the node does not keep its owner alive
        #expect(cell.postNow(BackTapped(id: 3)) == .delivered(count: 1))
        #expect(rootSaw.value == [2, 3])
        #expect(list.node.subscriptionCount == 0)  // reclaimed by the post that found the owner gone
        // An owner already gone: nothing is registered.
        let gone = list.on(BackTapped.self).freeWith(Drawer()).handle { _, _ in .stop }
        #expect(gone.isDisposed)
        #expect(cell.postNow(BackTapped(id: 4)) == .delivered(count: 1))
        rootToken.dispose()
    }

    @Test("A throwing handle's error goes to the node's handlerErrorHandler and counts as .continue")
    @MainActor
    func throwingHandle() {
        let (root, list, cell) = Self.chain()
        let errors = Shared<[String]>([])
        list.handlerErrorHandler = { failure in
            errors.append("\(failure.error is Refused) \(failure.typeName.hasSuffix("BackTapped")) \(isOnMainQueue)")
        }
        let drawer = Drawer()
        let tokens = [
            list.on(BackTapped.self).handle { event throws in
                if event.id == 1 { throw Refused() }
                return .stop
            },
            list.on(BackTapped.self).freeWith(drawer).handle { drawer, event throws in
                if event.id == 1 { throw Refused() }
                drawer.closed.append(event.id)
                return .continue
            },
            root.on(BackTapped.self).next { _ in },
        ]
        #expect(cell.postNow(BackTapped(id: 1)) == .delivered(count: 3))
        #expect(errors.value == ["true true true", "true true true"])
        #expect(cell.postNow(BackTapped(id: 2)) == .stopped(atDepth: 1, delivered: 1))
        #expect(drawer.closed.isEmpty)  // registered after the stopping handler
        for token in tokens { token.dispose() }
    }

    @Test("Off the main queue (never so through post) a main-actor handle is enqueued; its stop does not apply")
    func offMainIsEnqueued() {
        let node = MainActorEventNode(name: "Node")
        let parent = EventNode(name: "Parent")
        let log = Shared<[String]>([])
        let token = node.on(BackTapped.self).handle { _ in
            log.append("handle on main: \(isOnMainQueue)")
            return .stop
        }
        let parentToken = parent.on(BackTapped.self).next { _ in log.append("parent") }
        // The inner EventNode, mounted on a plain node and posted from another thread: only the
        // library could do this.
        #expect(node.node.mount(on: parent))
        let outcome = Shared<ChainOutcome?>(nil)
        #expect(onAnotherThread { outcome.withLock { $0 = node.node.post(BackTapped()) } })
        #expect(outcome.value == .delivered(count: 2))
        #expect(waitUntil { log.value.count == 2 })
        #expect(Set(log.value) == ["parent", "handle on main: true"])  // no stop: the parent got it (in either order)
        token.dispose()
        parentToken.dispose()
    }
}
