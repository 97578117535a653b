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
            // The owner is checked on the queue, not here: reading it here would retain it on the
            // dispatching thread, where its deinit could then run.
            guard node.isLive else { return true }
            queue.async { if !self.invoke(event) { self.reclaimDeadOwners() } }
            return true
        case .mainActor:
            return deliverOnMainActor(event)
        }
    }

    /// What a delivery may do at this moment. Checked right before every call (for an enqueued
    /// delivery: again on its queue), which is what makes the dispose guarantee hold.
    enum Admission {
        /// The subscription has ended: do nothing.
        case ended
        /// Its owner has been deallocated: do nothing, and have the subscription reclaimed.
        case ownerGone
        /// Call the handler, keeping `owner` (`nil` for a subscription without one) alive meanwhile.
        case call(owner: AnyObject?)
    }

    @inline(__always)
    func admission() -> Admission {
        guard node.isLive else { return .ended }
        guard node.isOwned else { return .call(owner: nil) }
        guard let owner = node.owner else { return .ownerGone }
        return .call(owner: owner)
    }

    /// Runs `call` with the owner to keep alive if ``admission()`` allows a call. Returns `false`
    /// if the owner is gone (the subscription should be reclaimed), `true` otherwise.
    @inline(__always)
    func ifAdmitted(_ call: (_ owner: AnyObject?) -> Void) -> Bool {
        switch admission() {
        case .ended: return true
        case .ownerGone: return false
        case .call(let owner):
            call(owner)
            return true
        }
    }

    /// Main-actor delivery: calls the handler now if the caller is on the main queue (so on the
    /// main actor), otherwise enqueues the call on the main queue, which keeps dispatch order.
    ///
    /// The admission is checked on the main queue right before the call, so the dispose guarantee
    /// covers enqueued deliveries. Not inlined: the immediate path stays as small as it was.
    @inline(never)
    func deliverOnMainActor(_ event: E) -> Bool {
        if isOnMainQueue { return invokeOnMainQueue(event) }
        // Off the main queue only liveness is checked: reading the owner (a view controller, say)
        // would retain it on this thread, where its deinit could then run.
        guard node.isLive else { return true }
        DispatchQueue.main.async { if !self.invokeOnMainQueue(event) { self.reclaimDeadOwners() } }
        return true
    }

    /// Has the bus reclaim the subscriptions of `E` whose owner is gone, when an enqueued delivery
    /// found its owner gone (a synchronous one returns `false` to the dispatch, which does this).
    func reclaimDeadOwners() {
        node.registry?.reapDeadOwners(of: E.self)
    }

    /// Calls the handler on the current thread if ``admission()`` allows it, with the owner, if
    /// any, retained for the call. Returns `false` if the owner is gone.
    @inline(__always)
    func invoke(_ event: E) -> Bool {
        // The common case, kept free of the owner machinery (it is the per-subscriber cost of every
        // dispatch): no owner, a plain handler. Its admission is the liveness check alone.
        if !node.isOwned, case .event(let body) = handler {
            if node.isLive { body(event) }
            return true
        }
        return ifAdmitted { owner in
            switch handler {
            case .event(let body): withExtendedLifetime(owner) { body(event) }
            case .ownerAndEvent(let body): body(Self.required(owner), event)
            case .mainActorEvent, .mainActorOwnerAndEvent: preconditionFailure("EventBus: a main-actor handler off the main actor")
            }
        }
    }

    /// The main-actor counterpart of ``invoke(_:)``, for the handlers made with `onMainActor()`.
    /// Call it only on the main queue: in a main-queue block, or after `isOnMainQueue` said so.
    func invokeOnMainQueue(_ event: E) -> Bool {
        // Checked in release builds too: the casts below are sound only on the main queue.
        precondition(isOnMainQueue, "EventBus: a main-actor handler called off the main queue")
        return ifAdmitted { owner in
            callOnMainQueue(event, owner: owner)
        }
    }

    /// Calls a main-actor handler; see ``invokeOnMainQueue(_:)``.
    private func callOnMainQueue(_ event: E, owner: AnyObject?) {
        // On the main queue main-actor code may run, so the handlers are called through their
        // nonisolated views. (`MainActor.assumeIsolated` would re-check the executor through the
        // runtime and allocate, on every delivery: about 460 instructions and one malloc.)
        switch handler {
        case .mainActorEvent(let body):
            // unsafeBitCast: isolation is a compile-time attribute of a synchronous function type
            // (same representation and calling convention), and we are on the main queue, where the
            // main actor runs (with Dispatch's main executor, the default on every platform).
            let call = unsafeBitCast(body, to: (@Sendable (E) -> Void).self)
            withExtendedLifetime(owner) { call(event) }
        case .mainActorOwnerAndEvent(let body):
            // unsafeBitCast: as above.
            let call = unsafeBitCast(body, to: (@Sendable (AnyObject, E) -> Void).self)
            call(Self.required(owner), event)
        case .event, .ownerAndEvent: preconditionFailure("EventBus: a nonisolated handler with main-actor delivery")
        }
    }

    /// The owner an owner-passing handler is called with: such handlers are only made by
    /// `freeWith(owner)` makers, so their nodes always have one.
    @inline(__always)
    private static func required(_ owner: AnyObject?) -> AnyObject {
        guard let owner else { preconditionFailure("EventBus: an owner-passing handler without an owner") }
        return owner
    }
}
