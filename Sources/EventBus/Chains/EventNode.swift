/// A place in an event chain: events posted on a node go to its own subscribers, then to its
/// parent's, and so on up to the root — to this node's ancestors only, never to the rest of the
/// tree.
///
/// The heir of Domino and of the responder-chain router (`routerEventWithName:userInfo:`), typed
/// and portable. Give each object of a tree (Root → Container → Content → Cell) a node, mount the
/// nodes on their parents, and post from the bottom:
///
/// ```swift
/// struct Liked: Event { let id: Int }
///
/// let container = EventNode(name: "Container")
/// let cell = EventNode(name: "Cell")
/// _ = cell.mount(on: container)
/// let token = container.on(Liked.self).next { event in print("liked", event.id) }
/// cell.post(Liked(id: 7))   // prints "liked 7"
/// ```
///
/// - **Subscribing** is the bus's: ``on(_:)`` returns the same ``SubscriberMaker``, so `ofType`,
///   `priority`, `monitor`, `handle`, `freeWith`, `atQueue`, `onMainActor`, tokens, bags and the
///   dispose guarantee behave exactly as on an ``EventBus``.
/// - **Posting** (``post(_:)``) is synchronous on the posting thread. The route `[self, parent,
///   grandparent, …]` is fixed when the post starts. At each node: its interceptors
///   (``intercept(_:file:line:_:)``), then its subscribers in the bus's order. A `handle` that
///   returns ``EventPropagation/stop`` lets its node finish as a bus dispatch does and ends the
///   event for every node above, except for `monitor()` subscribers, which see stopped and
///   dropped events.
/// - **Requests** (`request(_:)`) go up the same route to the first answerer that answers.
///
/// Thread-safe: mount, unmount, subscribe, post and dispose from any thread, from inside handlers
/// too. No handler, interceptor, answerer or provided-parent closure runs while the library holds
/// a lock. Nothing keeps a node alive but its owner (its parent and its children do not): owner →
/// node → handlers never reaches back to the owner, since owner-bound handlers receive their owner
/// instead of capturing it. When a node is deallocated its children become roots and its
/// subscriptions end (after the posts that are delivering to them, if any).
public final class EventNode: EventConfigurable, Sendable {
    /// The node's name in ``route``, ``treeDescription`` and request errors: usually its owner's type.
    ///
    /// ```swift
    /// let node = EventNode(name: "CellView")
    /// print(node.name)   // "CellView"
    /// ```
    public var name: String { link.name }

    /// The subscriptions, interceptors and answerers: the bus's own registry, behind a bus that only
    /// this node uses (so the makers, tokens and dispose guarantee are the bus's).
    let bus: EventBus

    /// The node's place in the tree (parent, children), which is what a post's route holds.
    let link: ChainLink

    /// Creates a root node (mount it with ``mount(on:)``).
    ///
    /// ```swift
    /// final class ContentScreen: EventNodeOwner, Sendable {
    ///     let eventNode = EventNode(name: "ContentScreen")
    /// }
    /// ```
    public init(name: String = "EventNode") {
        bus = EventBus()
        link = ChainLink(name: name, bus: bus, providedParent: nil)
    }

    /// Creates a node whose parent is provided by `parent`, asked each time a post or request
    /// starts (with no lock held, on the posting thread), unless a parent is mounted.
    ///
    /// This is how a UIKit or AppKit tree follows the responder chain without the library importing
    /// UIKit: return the next responder's node. `parent` must not capture the node's owner strongly
    /// (the node would keep its owner alive): capture it `weak`. A provided parent that leads back
    /// into the route ends the route there (a cycle is never walked twice).
    ///
    /// ```swift
    /// final class Screen: EventNodeOwner, @unchecked Sendable {
    ///     weak var host: Screen?   // a UIView would read self.superview / self.next here
    ///     private(set) lazy var eventNode: EventNode = EventNode(name: "Screen") { [weak self] in self?.host?.eventNode }
    /// }
    /// ```
    public init(name: String = "EventNode", parent: @escaping @Sendable () -> EventNode?) {
        bus = EventBus()
        link = ChainLink(name: name, bus: bus, providedParent: parent)
    }

    deinit {
        // The link is gone: children become roots, the parent forgets it, and what it held is let go
        // after unlocking (see ChainTree.remove).
        ChainTree.remove(link)
    }

    // MARK: - The tree

    /// Makes `parent` this node's parent, held weakly; `false` (and nothing changes) if `parent`
    /// is this node or one of its descendants.
    ///
    /// Remounting moves the node (with its subtree). A mounted parent takes precedence over a
    /// provided one (``init(name:parent:)``). Posts already in progress keep the route they
    /// started with. Cost: O(min(depth of `parent`, size of this node's subtree)) under the tree's
    /// process-wide lock, which posts never take (the cycle check walks up from `parent` and down
    /// from this node in turn): O(1) for a node with no children (building top-down) or onto a root
    /// (building bottom-up), O(n log n) in all to build any tree of n nodes by mounting roots. Safe
    /// from any thread, from inside handlers too.
    ///
    /// ```swift
    /// let root = EventNode(name: "Root")
    /// let cell = EventNode(name: "Cell")
    /// assert(cell.mount(on: root))
    /// assert(!root.mount(on: cell))   // a cycle: refused
    /// ```
    @discardableResult
    public func mount(on parent: EventNode) -> Bool {
        ChainTree.mount(link, on: parent.link).mounted
    }

    /// Detaches this node from its mounted parent: it becomes a root (or follows its provided
    /// parent, if it has one). O(1); does nothing on a root.
    ///
    /// ```swift
    /// let root = EventNode(name: "Root")
    /// let cell = EventNode(name: "Cell")
    /// cell.mount(on: root)
    /// cell.unmount()
    /// assert(cell.route == ["Cell"])
    /// ```
    public func unmount() {
        ChainTree.unmount(link)
    }

    /// The names of the nodes a post from here would visit now, this node first.
    ///
    /// Asks provided parents (see ``init(name:parent:)``). O(depth): each node's own lock once, none
    /// that other chains or mounts take.
    ///
    /// ```swift
    /// let root = EventNode(name: "Root")
    /// let cell = EventNode(name: "Cell")
    /// cell.mount(on: root)
    /// print(cell.route)   // ["Cell", "Root"]
    /// ```
    public var route: [String] { ChainRoute.names(from: self) }

    /// This node and its mounted descendants, one per line, children in the order they were
    /// mounted, indented by two spaces per level below this node. From depth 33 on, the indentation
    /// stops growing and the line gives its depth in brackets instead (`[40] Cell`), so the text
    /// stays linear in the number of nodes however deep the tree is. For debugging: O(size of the
    /// subtree), iterative (no recursion at any depth), taking the tree's lock once per node for a
    /// copy of its children (posts never take that lock); a node mounted, moved or unmounted
    /// meanwhile may or may not show, but never hides the others.
    ///
    /// ```swift
    /// let root = EventNode(name: "Root")
    /// EventNode(name: "Cell").mount(on: root)
    /// print(root.treeDescription)
    /// // Root
    /// //   Cell
    /// ```
    public var treeDescription: String { ChainTree.describe(from: link) }

    /// The depth from which a ``treeDescription`` line is no longer indented further but gives its
    /// depth in brackets.
    static var treeIndentationLimit: Int { 32 }

    // MARK: - Subscribing

    /// Starts a subscription on this node to events of exactly type `type`: the bus's maker.
    ///
    /// Everything ``EventBus/on(_:)`` offers works the same here (`ofType`, `priority`,
    /// `monitor`, `freeWith`, `atQueue`, `onMainActor`, `next`, `handle`, tokens, bags). Handlers
    /// run when a post from this node or from one of its descendants reaches this node: on the
    /// posting thread, or on their queue or the main actor (enqueued in route order). The
    /// subscription ends when its token is disposed, its owner is deallocated, or this node is
    /// deallocated. Nothing is ever kept on a node, so `replayingSticky()` replays nothing.
    ///
    /// ```swift
    /// let content = EventNode(name: "Content")
    /// let token = content.on(BackTapped.self).handle { _ in .stop }   // nothing above sees it
    /// ```
    public func on<E: Event>(_ type: E.Type) -> SubscriberMaker<E, Never, EventDelivery.Synchronous> {
        bus.on(type)
    }

    /// This node's settings: its tracers, context propagator and handler-error handler, which
    /// ``EventConfigurable`` offers as members of the node (`node.tracer`, `node.addTracer(_:)`,
    /// `node.contextPropagator`, `node.handlerErrorHandler`). A node's own, not its parent's: a
    /// node's tracer sees the posts that reach that node.
    ///
    /// ```swift
    /// let root = EventNode(name: "Root")
    /// root.tracer = { record in print(record) }
    /// root.post(Liked(id: 7))   // prints "chain hop MyApp.Liked at Root (depth 0): 0 delivered"
    /// ```
    public var configuration: EventConfiguration { bus.configuration }

    /// The number of live subscriptions on this node (interceptors and answerers included). O(1).
    ///
    /// ```swift
    /// assert(EventNode().subscriptionCount == 0)
    /// ```
    public var subscriptionCount: Int { bus.subscriptionCount }

    /// The live subscriptions on this node (interceptors and answerers included, named
    /// `intercept(T)` and `answer(R)`), as ``EventBus/subscriptions`` lists a bus's: who listens to
    /// what, from which line. O(N) in the node's subscriptions; no lock held while it is built.
    ///
    /// ```swift
    /// let node = EventNode(name: "Root")
    /// let token = node.on(Liked.self).next { _ in }
    /// for info in node.subscriptions { print(info) }   // "#1 Liked synchronous, normal, made at …"
    /// ```
    public var subscriptions: [SubscriptionInfo] { bus.subscriptions }

    /// Registers `interceptor`, which sees each `E` reaching this node before the node's
    /// subscribers, and returns its token.
    ///
    /// Interceptors of a node run in registration order, synchronously on the posting thread.
    /// ``Interception/forward(_:)`` passes the value it carries to the next interceptor, this
    /// node's subscribers and every node above; ``Interception/drop`` ends the event (monitors still
    /// see it, and the post returns ``ChainOutcome/dropped(atDepth:delivered:)``). Disposing the
    /// token ends the interceptor as for a subscription; so does the node's deallocation.
    ///
    /// ```swift
    /// let container = EventNode(name: "Container")
    /// let token = container.intercept(Statistics.self) { event in
    ///     var event = event
    ///     event.section = 3
    ///     return .forward(event)
    /// }
    /// ```
    public func intercept<E: Event>(
        _ type: E.Type, file: StaticString = #fileID, line: UInt = #line,
        _ interceptor: @escaping @Sendable (E) -> Interception<E>
    ) -> EventToken {
        SubscriberMaker<InterceptedEvent<E>, Never, EventDelivery.Synchronous>(bus: bus).handle(file: file, line: line)
        {
            slot in
            switch interceptor(slot.event) {
            case .forward(let value):
                slot.event = value
                return .continue
            case .drop:
                return .stop
            }
        }
    }

    // MARK: - Posting

    /// Sends `event` up the chain: to this node, then to each ancestor, and returns what happened.
    ///
    /// Synchronous: every synchronous handler on the route has run when it returns (queued and
    /// main-actor subscribers are enqueued, in route order). The route is fixed when the post
    /// starts (mounts and unmounts meanwhile do not change it). At each node, its interceptors
    /// run, then its subscribers in the bus's order (priority, keyed before unkeyed, subscription
    /// order, monitors last). Posting, mounting, unmounting and disposing from inside a handler
    /// are safe; a post from a handler is delivered at once, depth-first. A subscription made
    /// during a post receives it if the post has not reached its node yet (at each node, the bus's
    /// rule: subscribers made after the node's delivery started do not receive it).
    ///
    /// Cost: O(depth) plus the subscribers reached: per node, its link's own lock once to fix the
    /// route (no lock that another chain's posts or any mount take), one atomic load to see whether
    /// it may have interceptors or subscribers of the type, its own subscriptions' lock once if it
    /// may, and once more for each of those it has; none held while user code runs; no allocation
    /// for routes of up to 24 nodes.
    ///
    /// ```swift
    /// let root = EventNode(name: "Root")
    /// let cell = EventNode(name: "Cell")
    /// cell.mount(on: root)
    /// let token = root.on(Liked.self).next { print("liked", $0.id) }
    /// switch cell.post(Liked(id: 7)) {
    /// case .unhandled: print("default action")
    /// default: break
    /// }
    /// ```
    @discardableResult
    public func post<E: Event>(_ event: E) -> ChainOutcome {
        ChainRoute.with(from: self) { route in Self.post(event, along: route) }
    }

    /// The trace record of a post at one node of its route.
    static func hop(
        _ type: Any.Type, at stop: ChainRoute.Stop, depth: Int, reached: Int, _ status: TraceRecord.ChainHop.Status
    ) -> TraceRecord.ChainHop {
        TraceRecord.ChainHop(type: type, node: stop.name, depth: depth, delivered: reached, status: status)
    }

    /// A hop's status: `ended` if the post had ended before this node, else what `ending` (how it
    /// ended here, if it did) says.
    static func status(ended: Bool, _ ending: ChainOutcome?) -> TraceRecord.ChainHop.Status {
        switch ending {
        case _ where ended: .ended
        case .stopped?: .stopped
        case .dropped?: .dropped
        default: .passed
        }
    }
}
