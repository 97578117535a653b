import Dispatch
import Testing

@testable import EventBus

/// A main-actor chain: `@MainActor` handlers, interceptors and answerers run in the post, in route
/// order; owners mount on owners; a provided parent follows a view tree; a post from another thread
/// hops to the main queue in call order; and `routes(owner:)`, the owner-bound table of routes.
@Suite("Chains: main-actor nodes and route tables", .offThePool)
struct MainActorChainTests {
    struct Liked: Event { var id = 0 }
    struct Opened: Event { var id = 0 }
    struct FetchChannelID: Request { typealias Response = String }

    @MainActor final class CellModel {
        let eventNode = MainActorEventNode(name: "Cell")
        var likes: [Int] = []
    }

    @Test("On the main actor: @MainActor handlers, interceptors and answerers run in the post, in route order")
    @MainActor
    func onMainActor() throws {
        let root = MainActorEventNode(name: "Root")
        let list = MainActorEventNode(name: "List")
        let cell = CellModel()
        #expect(list.mount(on: root))
        #expect(cell.eventNode.mount(on: list))
        #expect(!root.mount(on: cell.eventNode))
        list.on(Liked.self).freeWith(cell).next { cell, event in cell.likes.append(event.id) }
        let doubling = list.intercept(Liked.self) { .forward(Liked(id: $0.id * 2)) }
        let rootSaw = Shared<[Int]>([])
        let monitor = root.on(Liked.self).monitor().next { event in rootSaw.withLock { $0.append(event.id) } }
        let answer = root.answer(FetchChannelID.self) { _ in .answer("channel-\(cell.likes.count)") }
        #expect(cell.eventNode.postNow(Liked(id: 3)) == .delivered(count: 2))
        #expect(cell.likes == [6])
        cell.eventNode.post(Liked(id: 4))  // on the main queue: at once
        #expect(cell.likes == [6, 8])
        #expect(try cell.eventNode.request(FetchChannelID()) == "channel-2")
        let dropping = list.intercept(Liked.self) { _ in .drop }
        #expect(cell.eventNode.postNow(Liked(id: 5)) == .dropped(atDepth: 1, delivered: 1))
        #expect(cell.likes == [6, 8])
        #expect(rootSaw.value == [6, 8, 10])  // the monitor saw the dropped one
        #expect(root.treeDescription == "Root\n  List\n    Cell")
        #expect(cell.eventNode.route == ["Cell", "List", "Root"])
        cell.eventNode.unmount()
        #expect(cell.eventNode.route == ["Cell"])
        for token in [doubling, monitor, answer, dropping] { token.dispose() }
    }

    @MainActor final class ListModel: MainActorEventNodeOwner {
        let eventNode = MainActorEventNode(name: "List")
        var likes: [Int] = []
        var consumes = true
    }

    @MainActor final class RowModel: MainActorEventNodeOwner {
        let eventNode = MainActorEventNode(name: "Row")
    }

    @Test("MainActorEventNodeOwner: owners mount on owners; on(_:) is bound to the owner, which its handlers receive")
    @MainActor
    func mainActorNodeOwner() {
        var list: ListModel? = ListModel()
        let row = RowModel()
        #expect(row.mount(on: list!))
        list!.on(Liked.self).next { owner, event in owner.likes.append(event.id) }
        list!.on(Liked.self).handle { owner, _ in owner.consumes ? .stop : .continue }
        #expect(row.eventNode.postNow(Liked(id: 1)) == .stopped(atDepth: 1, delivered: 2))
        #expect(list!.likes == [1])
        #expect(list!.eventNode.subscriptions.allSatisfy { $0.ownerType?.hasSuffix("ListModel") == true })
        weak let gone = list
        list = nil
        #expect(gone == nil, "the owner's own subscriptions do not keep it alive")
        #expect(row.eventNode.postNow(Liked(id: 2)) == .unhandled)
    }

    @MainActor final class View {
        weak var superview: View?
        let name: String
        init(_ name: String) { self.name = name }
        private(set) lazy var eventNode: MainActorEventNode = MainActorEventNode(name: name) { [weak self] in
            self?.superview?.eventNode
        }
    }

    @Test("A @MainActor provided parent follows a view tree at post time, without keeping the view alive")
    @MainActor
    func providedParentOnMainActor() {
        let window = View("Window")
        let screen = View("Screen")
        var cell: View? = View("Cell")
        screen.superview = window
        cell!.superview = screen
        let seen = Shared<[String]>([])
        let token = window.eventNode.on(Liked.self).next { _ in seen.append("window") }
        defer { token.dispose() }
        #expect(cell!.eventNode.route == ["Cell", "Screen", "Window"])
        #expect(cell!.eventNode.postNow(Liked()) == .delivered(count: 1))
        cell!.superview = window
        #expect(cell!.eventNode.route == ["Cell", "Window"])
        let watch = WeakReference(cell!)
        cell = nil
        #expect(watch.object == nil)
        #expect(seen.value == ["window"])
        // A mounted node that dies leaves its parent's children: no dead entries pile up.
        for _ in 0..<10 { EventNode().mount(on: window.eventNode.node) }
        #expect(ChainTree.lock.withLock { _ in window.eventNode.node.link.firstChild == nil })
    }

    @Test("A post from another thread hops to the main queue, in call order")
    func postFromBackground() {
        let node = MainActorEventNode(name: "Node")
        let seen = Shared<[Int]>([])
        let offMain = Shared(0)
        let token = node.on(Liked.self).next { event in
            if !isOnMainQueue { offMain.increment() }
            seen.withLock { $0.append(event.id) }
        }
        let posted = onAnotherThread {
            for id in 0..<50 { node.post(Liked(id: id)) }
        }
        #expect(posted)
        #expect(waitUntil { seen.value.count == 50 })
        #expect(seen.value == Array(0..<50))
        #expect(offMain.value == 0)
        token.dispose()
    }

    @Test("routes(owner:) is one owner-bound table: it ends with the owner, or when disposed")
    func routesTable() {
        final class Screen: Sendable {
            let log = Shared<[String]>([])
        }
        let node = EventNode(name: "Screen")
        var screen: Screen? = Screen()
        let log = screen!.log
        let routes = node.routes(owner: screen!) { table in
            table.on(Liked.self) { owner, event in owner.log.append("liked \(event.id)") }
            table.handle(Opened.self) { owner, event in
                owner.log.append("opened \(event.id)")
                return .stop
            }
        }
        #expect(routes.tokens.count == 2)
        #expect(node.post(Liked(id: 1)) == .delivered(count: 1))
        #expect(node.post(Opened(id: 2)) == .stopped(atDepth: 0, delivered: 1))
        #expect(log.value == ["liked 1", "opened 2"])
        let watch = WeakReference(screen!)
        screen = nil
        #expect(watch.object == nil)
        #expect(node.post(Liked(id: 3)) == .unhandled)
        node.routes(owner: Screen()) { table in table.on(Liked.self) { _, _ in } }  // owner gone at once
        #expect(node.post(Liked()) == .unhandled)
        let other = Screen()
        let second = node.routes(owner: other) { table in table.on(Liked.self) { _, _ in } }
        #expect(!second.isDisposed)
        second.dispose()
        #expect(second.isDisposed)
        #expect(node.post(Liked()) == .unhandled)
    }
}
