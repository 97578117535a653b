// The public dispatch's step into the core, in the engine: it takes the event's address.
extension EventBus {
    /// Delivers `event` to every subscriber of its type and key.
    ///
    /// Subscribers without a queue are called **synchronously on the calling thread**, one after
    /// the other, before `dispatch` returns; subscribers made with ``SubscriberMaker/atQueue(_:)``
    /// get the event asynchronously on their queue, and main-actor subscribers on the main actor.
    /// Order: the subscribers of the event's ``Event/eventType`` key first, in subscription order,
    /// then the unkeyed subscribers, in subscription order.
    ///
    /// From inside a handler you may dispatch again (delivered immediately, depth-first),
    /// subscribe (the new subscriber does not receive the event being delivered) and dispose any
    /// subscription (a disposed subscriber not yet called for this event is not called).
    ///
    /// ```swift
    /// bus.dispatch(LoginEvent(userID: "42"))
    /// ```
    @inlinable
    public func dispatch<E: Event>(_ event: E) {
        // The event passes by address (borrowed in place, never copied into a box or an
        // existential) with its key: where `E` is known, taking the address and reading the key
        // cost nothing, and the bus's generic code gets both ready.
        withUnsafePointer(to: event) { core.dispatch(addressOf: $0, key: event._routingKey, on: self) }
    }
}
