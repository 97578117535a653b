/// What an interceptor (`EventNode.intercept(_:_:)`) decides for an event reaching its
/// node: pass it on, possibly changed, or drop it.
///
/// ```swift
/// let container = EventNode(name: "Container")
/// _ = container.intercept(Statistics.self) { event in
///     var event = event
///     event.section = 3
///     return .forward(event)   // this node and every node above see section 3
/// }
/// ```
public enum Interception<E: Sendable>: Sendable {
    /// Goes on with `value`: the interceptors after this one, this node's subscribers and every
    /// node above see it instead of the original.
    case forward(E)
    /// Ends the event here: no handler of this node or above sees it; monitors still do, and
    /// ``EventNode/post(_:)`` returns ``ChainOutcome/dropped(atDepth:delivered:)``.
    case drop
}
