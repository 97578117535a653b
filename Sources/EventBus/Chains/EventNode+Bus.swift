extension EventNode {
    /// Re-dispatches on `bus` every `E` that reaches this node, and returns the forwarding
    /// subscription's token.
    ///
    /// A plain synchronous subscriber of this node (normal priority, in subscription order): an
    /// event stopped or dropped below this node does not reach it, so it is not forwarded. The bus
    /// is held weakly: once it is gone, nothing is forwarded. The other way round needs no API: a
    /// bus subscriber may post into a chain (`bus.on(E.self).next { node.post($0) }`).
    ///
    /// ```swift
    /// let bus = EventBus()
    /// let root = EventNode(name: "Root")
    /// let token = root.forward(Liked.self, to: bus)   // every like reaching the root, app-wide
    /// ```
    public func forward<E: Event>(_ type: E.Type, to bus: EventBus) -> EventToken {
        on(type).next { [weak bus] event in bus?.dispatch(event) }
    }
}
