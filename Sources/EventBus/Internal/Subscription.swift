import Dispatch

/// A subscription to events of type `E`: the node plus its typed body.
///
/// Built by a maker, which knows the handler's shape and the owner's type, so the body needs no
/// cast and no invalid combination exists. ``deliver(_:)`` is the one place a handler is called from.
final class Subscription<E: Event>: SubscriptionNode, @unchecked Sendable {
    // @unchecked Sendable: as SubscriptionNode; `body` and `plainHandler` are immutable.
    let body: Body<E>
    /// The handler of the commonest body, `.immediate(.event)` with no owner, kept apart so that
    /// delivering to it reads one field and copies nothing (the per-subscriber cost of a dispatch).
    private let plainHandler: (@Sendable (E) -> Void)?

    init(
        id: UInt64, slot: UInt32, key: String?, body: Body<E>, owner: AnyObject?, isOwned: Bool, bucket: Bucket,
        anchor: ContainerAnchor
    ) {
        self.body = body
        if !isOwned, case .immediate(.event(let handler)) = body { plainHandler = handler } else { plainHandler = nil }
        super.init(
            id: id, slot: slot, key: key, owner: owner, isOwned: isOwned, ownerBelongsToMain: body.runsOnMain,
            bucket: bucket, anchor: anchor)
    }

    override func deliver(_ event: UnsafeRawPointer) -> Outcome {
        // A dispatch of `E` reaches only the nodes in the bucket of `E` (`TypeIndex.insert`).
        let event = event.assumingMemoryBound(to: E.self)
        if let plainHandler {
            guard isLive else { return .ended }
            plainHandler(event.pointee)
            return .delivered
        }
        return deliver(event.pointee)
    }

    /// Delivers `event` as the body says: now, on its queue, or on the main actor.
    @inline(__always)
    func deliver(_ event: E) -> Outcome {
        switch body {
        case .immediate(let callback):
            return call(callback, event)
        case .queue(let queue, let callback):
            // The owner is checked on the queue, not here: reading it here would retain it on this
            // thread, where its deinit could then run.
            guard isLive else { return .ended }
            queue.async { self.finishEnqueued(self.call(callback, event)) }
            return .enqueued
        case .mainActor(let callback):
            return deliverOnMainActor(callback, event)
        }
    }

    /// Calls a nonisolated callback on this thread if the subscription is live and its owner, if
    /// any, alive (retained for the call).
    @inline(__always)
    private func call(_ callback: Callback<E>, _ event: E) -> Outcome {
        // The common case, kept free of the owner machinery: no owner, a plain handler.
        if !isOwned, case .event(let handler) = callback {
            guard isLive else { return .ended }
            handler(event)
            return .delivered
        }
        guard isLive else { return .ended }
        guard isOwned else { return call(callback, nil, event) }
        guard let owner else { return .ownerGone }
        return call(callback, owner, event)
    }

    @inline(__always)
    private func call(_ callback: Callback<E>, _ owner: AnyObject?, _ event: E) -> Outcome {
        withExtendedLifetime(owner) {
            switch callback {
            case .event(let handler): handler(event)
            case .ownerAndEvent(let handler):
                // Owner-passing callbacks are only made by owned makers, whose nodes have an owner.
                if let owner { handler(owner, event) }
            }
        }
        return .delivered
    }

    /// Main-actor delivery: now if on the main queue, otherwise enqueued on it (in dispatch order).
    @inline(never)
    private func deliverOnMainActor(_ callback: MainActorCallback<E>, _ event: E) -> Outcome {
        if isOnMainQueue { return callOnMainQueue(callback, event) }
        // Off the main queue only liveness is checked: the owner is read on the main queue.
        guard isLive else { return .ended }
        DispatchQueue.main.async { self.finishEnqueued(self.callOnMainQueue(callback, event)) }
        return .enqueued
    }

    private func callOnMainQueue(_ callback: MainActorCallback<E>, _ event: E) -> Outcome {
        // Checked in release builds too: the bit casts below are sound only on the main queue.
        precondition(isOnMainQueue, "EventBus: a main-actor handler called off the main queue")
        guard isLive else { return .ended }
        let owner = isOwned ? owner : nil
        if isOwned && owner == nil { return .ownerGone }
        // On the main queue main-actor code may run, so the handlers are called through their
        // nonisolated views. (`MainActor.assumeIsolated` would re-check the executor through the
        // runtime and allocate, on every delivery.)
        withExtendedLifetime(owner) {
            switch callback {
            case .event(let handler):
                // unsafeBitCast: isolation is a compile-time attribute of a synchronous function
                // type (same representation and calling convention), and this is the main queue.
                unsafeBitCast(handler, to: (@Sendable (E) -> Void).self)(event)
            case .ownerAndEvent(let handler):
                // unsafeBitCast: as above.
                if let owner { unsafeBitCast(handler, to: (@Sendable (AnyObject, E) -> Void).self)(owner, event) }
            }
        }
        return .delivered
    }

    /// After an enqueued delivery ran: a dead owner found there has the subscription reclaimed.
    private func finishEnqueued(_ outcome: Outcome) {
        guard outcome == .ownerGone else { return }
        anchor?.container.reclaim(CollectionOfOne(handle))
    }
}
