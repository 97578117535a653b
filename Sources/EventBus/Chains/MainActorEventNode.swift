import Dispatch

/// A place in a main-actor event chain: as ``EventNode``, but every handler, interceptor and
/// answerer is `@MainActor` (checked by the compiler) and every post is delivered on the main
/// actor.
///
/// The delivery mode belongs to the chain, not to a global switch: main-actor nodes mount only on
/// main-actor nodes, so a whole UI tree delivers on the main actor while the thread-safe
/// ``EventNode`` chains elsewhere deliver on their posting threads.
///
/// ```swift
/// @MainActor final class CellModel {
///     let eventNode = MainActorEventNode(name: "Cell")
///     var likes = 0
/// }
/// @MainActor func wire(_ cell: CellModel, under list: MainActorEventNode) {
///     cell.eventNode.mount(on: list)
///     list.on(Liked.self).freeWith(cell).next { cell, _ in cell.likes += 1 }   // @MainActor
/// }
/// ```
///
/// ``post(_:)`` is `nonisolated`: on the main queue it delivers at once; elsewhere it enqueues the
/// post on the main queue, in call order (a later post made on the main queue runs at once, so it
/// can overtake posts still waiting). ``postNow(_:)`` delivers at once and returns the
/// ``ChainOutcome``. Subscribers use the bus's maker with ``EventDelivery/MainActorChain``:
/// `@MainActor` `next` and `handle` (a post always runs on the main queue, so `.stop` ends the
/// nodes above, as on an ``EventNode``), `freeWith`, `priority`, `monitor`, `ofType`, tokens and
/// bags. Answerers may be `async`: `try await request(_:)` awaits them.
public final class MainActorEventNode: EventConfigurable, Sendable {
    let node: EventNode

    /// Creates a root node; mount it with ``mount(on:)``.
    ///
    /// ```swift
    /// let root = MainActorEventNode(name: "RootViewController")
    /// ```
    public init(name: String = "MainActorEventNode") {
        node = EventNode(name: name)
    }

    /// Creates a node whose parent is provided by the `@MainActor` `parent`, asked on the main
    /// actor each time a post or request starts, unless a parent is mounted. See
    /// ``EventNode/init(name:parent:)``.
    ///
    /// This is the UIKit/AppKit recipe: return the node of the next responder that has one (the
    /// library imports no UIKit). Capture the owner `weak`.
    ///
    /// ```swift
    /// @MainActor final class Screen {
    ///     weak var host: Screen?
    ///     private(set) lazy var eventNode: MainActorEventNode = MainActorEventNode(name: "Screen") { [weak self] in
    ///         self?.host?.eventNode
    ///     }
    /// }
    /// ```
    public init(name: String = "MainActorEventNode", parent: @escaping @MainActor @Sendable () -> MainActorEventNode?) {
        let provide = onMainQueue { @MainActor (_: Void) in parent()?.node }
        // The wrapped closure does not throw (it is `parent`, checked to be on the main queue).
        node = EventNode(name: name) { (try? provide(())) ?? nil }
    }

    /// The node's name in ``route`` and ``treeDescription``.
    ///
    /// ```swift
    /// print(MainActorEventNode(name: "Root").name)   // "Root"
    /// ```
    public var name: String { node.name }

    /// Makes `parent` this node's parent (held weakly); `false` on a cycle. See
    /// ``EventNode/mount(on:)``.
    ///
    /// ```swift
    /// @MainActor func build() {
    ///     let root = MainActorEventNode(name: "Root")
    ///     let cell = MainActorEventNode(name: "Cell")
    ///     cell.mount(on: root)
    /// }
    /// ```
    @MainActor @discardableResult
    public func mount(on parent: MainActorEventNode) -> Bool {
        node.mount(on: parent.node)
    }

    /// Detaches this node from its parent: it becomes a root. See ``EventNode/unmount()``.
    ///
    /// ```swift
    /// @MainActor func detach(_ cell: MainActorEventNode) { cell.unmount() }
    /// ```
    @MainActor
    public func unmount() {
        node.unmount()
    }

    /// The names of the route a post from here would take now (asking provided parents, on the
    /// main actor). See ``EventNode/route``.
    ///
    /// ```swift
    /// @MainActor func show() { print(MainActorEventNode(name: "Root").route) }   // ["Root"]
    /// ```
    @MainActor
    public var route: [String] { node.route }

    /// This node and its mounted descendants, indented (past depth 32, the depth is written in
    /// brackets instead). See ``EventNode/treeDescription``.
    ///
    /// ```swift
    /// print(MainActorEventNode(name: "Root").treeDescription)   // "Root"
    /// ```
    public var treeDescription: String { node.treeDescription }

    /// This node's settings, as an ``EventNode``'s: its tracers (which see the posts reaching this
    /// node, on the main queue where they run), context propagator (which also carries a context from
    /// a ``post(_:)`` made off the main queue to the main queue) and handler-error handler (called on
    /// the main actor), offered by ``EventConfigurable`` as members of the node.
    ///
    /// ```swift
    /// let list = MainActorEventNode(name: "List")
    /// list.tracer = { record in print(record) }
    /// ```
    public var configuration: EventConfiguration { node.configuration }

    /// The number of live subscriptions on this node (interceptors and answerers included). O(1).
    ///
    /// ```swift
    /// assert(MainActorEventNode().subscriptionCount == 0)
    /// ```
    public var subscriptionCount: Int { node.subscriptionCount }

    /// The live subscriptions on this node, as ``EventNode/subscriptions`` lists them. O(N) in the
    /// node's subscriptions. Owners' liveness is reported only when read on the main queue.
    ///
    /// ```swift
    /// @MainActor func dump(_ node: MainActorEventNode) {
    ///     for info in node.subscriptions { print(info) }
    /// }
    /// ```
    public var subscriptions: [SubscriptionInfo] { node.subscriptions }

    /// Starts a subscription on this node: the bus's maker delivering on the main actor
    /// (``EventDelivery/MainActorChain``), whose `@MainActor` handlers run synchronously in the post
    /// (which always runs on the main queue): `next`, and `handle`, whose
    /// ``EventPropagation/stop`` ends the event for the nodes above except their monitors.
    ///
    /// ``SubscriberMaker/monitor()`` makes a main-actor monitor (which offers `next`, not `handle`);
    /// chaining ``SubscriberMaker/atQueue(_:)`` makes an observer on that queue, enqueued in route
    /// order. The subscription ends when its token is disposed, its owner is deallocated, or this
    /// node is deallocated.
    ///
    /// ```swift
    /// @MainActor final class Badge { var count = 0 }
    /// @MainActor func bind(_ badge: Badge, to node: MainActorEventNode) {
    ///     node.on(Liked.self).freeWith(badge).next { badge, _ in badge.count += 1 }
    ///     node.on(Liked.self).freeWith(badge).handle { badge, _ in badge.count > 9 ? .stop : .continue }
    /// }
    /// ```
    public func on<E: Event>(_ type: E.Type) -> SubscriberMaker<E, Never, EventDelivery.MainActorChain> {
        node.on(type).onMainActorChain()
    }

    /// Re-dispatches on `bus` every `E` that reaches this node (on the main queue, where the node's
    /// posts run), and returns the forwarding subscription's token. See ``EventNode/forward(_:to:)``:
    /// an event stopped or dropped below this node is not forwarded; the bus is held weakly.
    ///
    /// ```swift
    /// @MainActor func share(_ list: MainActorEventNode) -> EventToken {
    ///     list.forward(Liked.self, to: EventBus.shared)   // every like reaching the list, app-wide
    /// }
    /// ```
    public func forward<E: Event>(_ type: E.Type, to bus: EventBus) -> EventToken {
        node.forward(type, to: bus)
    }

    /// Registers a `@MainActor` interceptor and returns its token. See
    /// `EventNode.intercept(_:_:)`: registration order, ``Interception/forward(_:)`` or
    /// ``Interception/drop``.
    ///
    /// ```swift
    /// @MainActor func enrich(_ container: MainActorEventNode) -> EventToken {
    ///     container.intercept(Statistics.self) { event in
    ///         var event = event
    ///         event.section = 3
    ///         return .forward(event)
    ///     }
    /// }
    /// ```
    @MainActor
    public func intercept<E: Event>(
        _ type: E.Type, file: StaticString = #fileID, line: UInt = #line,
        _ interceptor: @escaping @MainActor @Sendable (E) -> Interception<E>
    ) -> EventToken {
        let call = onMainQueue(interceptor)
        // The wrapped interceptor does not throw (it is `interceptor`, checked to be on the main queue).
        return node.intercept(type, file: file, line: line) { event in (try? call(event)) ?? .forward(event) }
    }

    /// Registers a synchronous `@MainActor` answerer and returns its token. See
    /// `EventNode.answer(_:_:)`.
    ///
    /// ```swift
    /// @MainActor func serve(_ root: MainActorEventNode) -> EventToken {
    ///     root.answer(FetchChannelID.self) { _ in .answer("channel-2") }
    /// }
    /// ```
    @MainActor
    public func answer<R: Request>(
        _ type: R.Type, file: StaticString = #fileID, line: UInt = #line,
        _ answerer: @escaping @MainActor @Sendable (R) throws -> Answer<R.Response>
    ) -> EventToken {
        node.answer(type, file: file, line: line, onMainQueue(answerer))
    }

    /// Registers an `async` `@MainActor` answerer for requests of type `type` reaching this node,
    /// and returns its token. See the `async` `EventNode.answer(_:_:)`.
    ///
    /// Only `try await request(_:)` waits for it: the synchronous `request(_:)` that meets it
    /// before any answer throws ``ChainRequestError/asyncAnswerer(request:route:atDepth:)``. It runs
    /// on the main actor, in the requesting task (which may suspend in it: other main-actor work,
    /// posts included, can run meanwhile); the answerers after it are asked only if it returns
    /// ``Answer/pass``. Disposing the token, or deallocating the node, ends it; a request already
    /// awaiting it is not interrupted.
    ///
    /// ```swift
    /// @MainActor final class SearchModel {
    ///     let eventNode = MainActorEventNode(name: "Search")
    ///     var index = ["swift", "swiftui"]
    ///     func serve() -> EventToken {
    ///         eventNode.answer(Search.self) { [weak self] search async in
    ///             await Task.yield()   // a real index would be queried here
    ///             return .answer(self?.index.filter { $0.hasPrefix(search.text) } ?? [])
    ///         }
    ///     }
    /// }
    /// ```
    @MainActor
    public func answer<R: Request>(
        _ type: R.Type, file: StaticString = #fileID, line: UInt = #line,
        _ answerer: @escaping @MainActor @Sendable (R) async throws -> Answer<R.Response>
    ) -> EventToken {
        // An async main-actor function converts to a nonisolated one, which hops to the main actor.
        node.answer(type, file: file, line: line, answerer as @Sendable (R) async throws -> Answer<R.Response>)
    }

    /// Asks `request` up the chain and returns the first answer, on the main actor. See
    /// `EventNode.request(_:)`.
    ///
    /// Throws ``ChainRequestError/asyncAnswerer(request:route:atDepth:)`` when an `async` answerer
    /// comes first: use `try await request(_:)`.
    ///
    /// ```swift
    /// @MainActor func channel(of cell: MainActorEventNode) throws -> String {
    ///     try cell.request(FetchChannelID())
    /// }
    /// ```
    @MainActor
    public func request<R: Request>(_ request: R) throws -> R.Response {
        try node.request(request)
    }

    /// Asks `request` up the chain on the main actor, awaiting `async` answerers, and returns the
    /// first answer. See the `async` `EventNode.request(_:)`.
    ///
    /// Synchronous answerers run on the main actor, in route order; an `async` answerer is awaited
    /// in turn, and the answerers after it are asked if it passes. The route is fixed when the
    /// request starts. Throws ``ChainRequestError/unanswered(request:route:)`` when no answerer
    /// answered, or the error an answerer threw. Callable from any task: it runs on the main actor.
    ///
    /// ```swift
    /// @MainActor final class CellModel {
    ///     let eventNode = MainActorEventNode(name: "Cell")
    ///     func suggestions(for text: String) async throws -> [String] {
    ///         try await eventNode.request(Search(text: text))   // async answerers too
    ///     }
    /// }
    /// ```
    @MainActor
    public func request<R: Request>(_ request: R) async throws -> R.Response {
        try await node.request(request)
    }

    /// Sends `event` up the chain on the main actor: at once when called on the main queue,
    /// otherwise enqueued on the main queue in call order.
    ///
    /// Callable from any thread. The route is fixed when the delivery starts (on the main queue).
    /// Use ``postNow(_:)`` on the main actor to get the ``ChainOutcome``.
    ///
    /// ```swift
    /// let cell = MainActorEventNode(name: "Cell")
    /// DispatchQueue.global().async { cell.post(Liked(id: 7)) }   // delivered on the main actor
    /// ```
    public nonisolated func post<E: Event>(_ event: E) {
        if isOnMainQueue {
            node.post(event)
        } else {
            let context = node.bus.core.captureContext()
            DispatchQueue.main.async { [node] in
                node.bus.core.withContext(
                    context, EventContextDelivery(event, hop: .chainPost(node: node.name), subscriptionID: nil)
                ) { _ = node.post(event) }
            }
        }
    }

    /// Sends `event` up the chain now and returns what happened. See ``EventNode/post(_:)``.
    ///
    /// ```swift
    /// @MainActor func tap(_ cell: MainActorEventNode) {
    ///     if cell.postNow(Liked(id: 7)).isUnhandled { print("default action") }
    /// }
    /// ```
    @MainActor @discardableResult
    public func postNow<E: Event>(_ event: E) -> ChainOutcome {
        node.post(event)
    }
}
