import Dispatch

/// A subscriber's closure, in one of the two shapes `next` accepts.
///
/// Stored type-erased in the ``EventToken`` node (so the index needs no generics) and copied,
/// typed, into the per-type dispatch snapshot.
enum Handler<E: Event>: Sendable {
    /// `next { event in }`
    case event(@Sendable (E) -> Void)
    /// `freeWith(owner).next { owner, event in }`: called with the owner retained for the call.
    case ownerAndEvent(@Sendable (AnyObject, E) -> Void)
}

/// Where a subscriber's handler runs.
enum DeliveryMode: Sendable {
    /// On the dispatching thread, before `dispatch` returns.
    case immediate
    /// Asynchronously on this queue, in dispatch order when it is serial.
    case queue(DispatchQueue)
}

/// One subscriber as a dispatch sees it: the node (liveness, owner, mode) and its typed handler.
///
/// Built under the bus lock when a snapshot is (re)built; used without the lock.
struct Delivery<E: Event>: Sendable {
    let node: EventToken
    let handler: Handler<E>

    /// Delivers `event` as the subscriber asked. Returns `false` if the owner is gone (the caller
    /// then has the dead subscription reclaimed), `true` otherwise.
    @inline(__always)
    func deliver(_ event: E) -> Bool {
        switch node.mode {
        case .immediate:
            return invoke(event)
        case .queue(let queue):
            guard node.isLive else { return true }
            queue.async { _ = self.invoke(event) }
            return true
        }
    }

    /// Calls the handler on the current thread if the subscription is still live and its owner,
    /// if any, still exists. The owner is retained for the duration of the call.
    @inline(__always)
    func invoke(_ event: E) -> Bool {
        guard node.isLive else { return true }
        guard node.isOwned else {
            switch handler {
            case .event(let body): body(event)
            case .ownerAndEvent: preconditionFailure("EventBus: an owner-passing handler without an owner")
            }
            return true
        }
        guard let owner = node.owner else { return false }
        switch handler {
        case .event(let body): withExtendedLifetime(owner) { body(event) }
        case .ownerAndEvent(let body): body(owner, event)
        }
        return true
    }
}
