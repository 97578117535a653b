import Dispatch

/// A subscriber's closure, in one of the shapes `next` accepts (nonisolated or main-actor).
///
/// Stored type-erased in the ``EventToken`` node (so the index needs no generics) and copied,
/// typed, into the per-type dispatch snapshot.
enum Handler<E: Event>: Sendable {
    /// `next { event in }`
    case event(@Sendable (E) -> Void)
    /// `freeWith(owner).next { owner, event in }`: called with the owner retained for the call.
    case ownerAndEvent(@Sendable (AnyObject, E) -> Void)
    /// `onMainActor().next { event in }`: called only on the main actor (mode `.mainActor`).
    case mainActorEvent(@MainActor @Sendable (E) -> Void)
    /// `onMainActor().next { owner, event in }`: called only on the main actor, with the owner
    /// retained for the call.
    case mainActorOwnerAndEvent(@MainActor @Sendable (AnyObject, E) -> Void)
}

/// Where a subscriber's handler runs.
enum DeliveryMode: Sendable {
    /// On the dispatching thread, before `dispatch` returns.
    case immediate
    /// Asynchronously on this queue, in dispatch order when it is serial.
    case queue(DispatchQueue)
    /// On the main actor: synchronously when the dispatch runs on the main queue, otherwise
    /// enqueued on the main queue in dispatch order. Only with the `mainActor…` handlers.
    case mainActor
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
            // Owner already gone: nothing to enqueue, and the caller reclaims the subscription now.
            if node.isOwned, node.owner == nil { return false }
            queue.async { _ = self.invoke(event) }
            return true
        case .mainActor:
            return deliverOnMainActor(event)
        }
    }

    /// Main-actor delivery: calls the handler now if the caller is on the main queue (so on the
    /// main actor), otherwise enqueues the call on the main queue, which keeps dispatch order.
    ///
    /// The liveness and owner checks are made again on the main queue right before the call, so
    /// the dispose guarantee covers enqueued deliveries. `MainActor.assumeIsolated` is only ever
    /// reached on the main queue. Not inlined: the immediate path stays as small as it was.
    @inline(never)
    func deliverOnMainActor(_ event: E) -> Bool {
        guard node.isLive else { return true }
        // Owner already gone: no hop to the main queue, and the caller reclaims the subscription now.
        if node.isOwned, node.owner == nil { return false }
        if isOnMainQueue {
            // On the main queue, hence on the main actor: the check in assumeIsolated holds.
            return MainActor.assumeIsolated { invokeOnMainActor(event) }
        }
        DispatchQueue.main.async {
            // A block of the main queue runs on the main actor.
            _ = MainActor.assumeIsolated { self.invokeOnMainActor(event) }
        }
        return true
    }

    /// The main-actor counterpart of ``invoke(_:)``: calls the handler if the subscription is
    /// still live and its owner, if any, still exists; the owner is retained for the call.
    @MainActor
    func invokeOnMainActor(_ event: E) -> Bool {
        guard node.isLive else { return true }
        guard node.isOwned else {
            switch handler {
            case .mainActorEvent(let body): body(event)
            case .mainActorOwnerAndEvent: preconditionFailure("EventBus: an owner-passing handler without an owner")
            case .event, .ownerAndEvent: preconditionFailure("EventBus: a nonisolated handler with main-actor delivery")
            }
            return true
        }
        guard let owner = node.owner else { return false }
        switch handler {
        case .mainActorEvent(let body): withExtendedLifetime(owner) { body(event) }
        case .mainActorOwnerAndEvent(let body): body(owner, event)
        case .event, .ownerAndEvent: preconditionFailure("EventBus: a nonisolated handler with main-actor delivery")
        }
        return true
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
            case .mainActorEvent, .mainActorOwnerAndEvent: preconditionFailure("EventBus: a main-actor handler off the main actor")
            }
            return true
        }
        guard let owner = node.owner else { return false }
        switch handler {
        case .event(let body): withExtendedLifetime(owner) { body(event) }
        case .ownerAndEvent(let body): body(owner, event)
        case .mainActorEvent, .mainActorOwnerAndEvent: preconditionFailure("EventBus: a main-actor handler off the main actor")
        }
        return true
    }
}
