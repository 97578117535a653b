/// What ``EventNode/post(_:)`` did with an event on its way up the chain.
///
/// `depth` counts from the posting node (0) up its route; `delivered` counts the deliveries that
/// started or were enqueued (handlers and monitors, as the bus counts them). Use ``isUnhandled``
/// to run a default action when nobody on the route took the event.
///
/// ```swift
/// let cell = EventNode(name: "Cell")
/// if cell.post(Liked(id: 7)).isUnhandled {
///     print("nobody above the cell handles likes")
/// }
/// ```
public enum ChainOutcome: Sendable, Hashable {
    /// The event went up the whole route and reached `count` subscribers (at least one).
    case delivered(count: Int)
    /// A `handle` handler of the node at `depth` returned ``EventPropagation/stop``: that node
    /// finished as the bus does (its monitors ran), and only monitors saw it above.
    case stopped(atDepth: Int, delivered: Int)
    /// An interceptor of the node at `depth` returned ``Interception/drop``: no handler saw it from
    /// there on, monitors (of that node and above) did.
    case dropped(atDepth: Int, delivered: Int)
    /// Nobody on the route took the event: no subscriber, interceptor decision or monitor.
    case unhandled

    /// The deliveries that started or were enqueued.
    ///
    /// ```swift
    /// let outcome = EventNode().post(Liked(id: 7))
    /// assert(outcome.delivered == 0)
    /// ```
    public var delivered: Int {
        switch self {
        case .delivered(let count): count
        case .stopped(_, let delivered), .dropped(_, let delivered): delivered
        case .unhandled: 0
        }
    }

    /// Whether nobody on the route took the event, so that the poster may run a default action.
    ///
    /// ```swift
    /// let outcome = EventNode().post(Liked(id: 7))
    /// assert(outcome.isUnhandled)
    /// ```
    public var isUnhandled: Bool { self == .unhandled }
}
