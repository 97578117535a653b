/// Subscribing, replaying the kept sticky events, and ending subscriptions: each a registry
/// operation under the lock, with what it returns acted on after unlocking.
extension BusCore {
    /// Registers the subscription whose nodes (`primary`, with the other keys' nodes as its
    /// siblings) ``makeNodes(keys:body:traits:owner:callSite:)`` or
    /// ``makePlainNodes(_:keys:handler:traits:callSite:)`` built, and returns its token, an inert one
    /// if `E`'s hooks refused it. `deliversNow`: whether a delivery made on this thread calls the
    /// handler now (evaluated only for a replay).
    ///
    /// With `traits.replaysSticky`, the kept sticky events of `E` and the keys are snapshot in the
    /// same critical section as the registration (so a concurrent dispatch is either replayed or
    /// delivered live, never both, never neither), then delivered: queued and off-main main-actor
    /// deliveries are enqueued before unlocking (so before any live one), the others are called
    /// on this thread before returning. The `.untilDelivered` events it replays are held for it
    /// (see `StickyStore`) until its handler ran for them, or did not (its owner was gone, or it
    /// ended, by the time the delivery ran): those are kept for the next taker. An enqueued one
    /// is held until its queue runs it (``StickyHold``, made under the lock like the enqueued
    /// block itself).
    @usableFromInline
    func subscribe<E: Sendable>(
        _ primary: SubscriptionNode, of _: E.Type, traits: SubscriptionTraits,
        deliversNow: @autoclosure () -> Bool, bus: EventBus
    ) -> EventToken {
        if traits.replaysSticky {
            return subscribeReplaying(primary, of: E.self, traits: traits, deliversNow: deliversNow(), bus: bus)
        }
        let registered = withRegistry { registry in
            registry.tick(.subscribe)
            return registry.subscribe(primary, of: E.self, traits: traits, bus: bus)
        }
        return registered.map { EventToken($0, in: self) } ?? .inert
    }

    /// The nodes of a new subscription with `body`: the primary, with the other keys' nodes as its
    /// siblings. Built before the lock is taken, and registered under it by `Registry.link`: an
    /// allocation under the lock would make every thread waiting for the lock wait for the
    /// allocator too. The plain shape gets its own class (see `PlainSubscription`).
    func makeNodes<E: Sendable>(
        keys: SubscriptionKeys, body: Body<E>, traits: SubscriptionTraits, owner: AnyObject?, callSite: CallSite
    ) -> SubscriptionNode {
        if case .immediate(.event(let handler)) = body, !traits.isOwned {
            return makePlainNodes(E.self, keys: keys, handler: handler, traits: traits, callSite: callSite)
        }
        return Self.nodes(for: keys) { key in
            Subscription(key: key, body: body, traits: traits, owner: owner, callSite: callSite, container: self)
        }
    }

    /// The nodes of a new subscription of the plain shape (see `PlainSubscription`), as
    /// ``makeNodes(keys:body:traits:owner:callSite:)``.
    @usableFromInline
    func makePlainNodes<E: Sendable>(
        _: E.Type, keys: SubscriptionKeys, handler: @escaping @Sendable (E) -> Void, traits: SubscriptionTraits,
        callSite: CallSite
    ) -> SubscriptionNode {
        let plainClass = PlainSubscriptionClasses.shared.plainClass(of: E.self)
        return Self.nodes(for: keys) { key in
            plainClass.init(handler: handler, key: key, traits: traits, callSite: callSite, container: self)
        }
    }

    /// The node `make` builds for the first key (or for none), with the other keys' as its siblings.
    /// A key given twice counts once (deduplicated here, so that chaining `ofType` stays O(1)).
    @inline(__always)
    private static func nodes(for keys: SubscriptionKeys, _ make: (String?) -> SubscriptionNode) -> SubscriptionNode {
        guard !keys.others.isEmpty else { return make(keys.first) }
        let unique = keys.unique
        let primary = make(unique[0])
        primary.siblings = unique.dropFirst().map(make)
        return primary
    }

    /// `subscribe` with the replay of the kept sticky events (see there).
    ///
    /// Nothing is enqueued under the lock (DESIGN §15): enqueueing captures the context (user code)
    /// and takes the mailbox's lock. A subscription whose replay is enqueued registers *gated*
    /// (``MailboxLane``): the live deliveries that reach it before its replay is enqueued wait
    /// behind it.
    private func subscribeReplaying<E: Sendable>(
        _ primary: SubscriptionNode, of _: E.Type, traits: SubscriptionTraits, deliversNow: Bool, bus: EventBus
    ) -> EventToken {
        let subscribed = withRegistry { registry in
            registry.tick(.subscribe)
            return registry.subscribeReplaying(primary, of: E.self, traits: traits, bus: bus)
        }
        guard let (node, replay) = subscribed else { return .inert }
        if !deliversNow, let typed = node as? Subscription<E> {
            enqueueReplay(replay, to: typed)
        } else {
            deliverReplay(replay, of: E.self, to: node)
            // A main-actor subscription made on the main thread replays there, but was gated for
            // its off-main deliveries: they may run now.
            (node as? Subscription<E>)?.liftReplayGate()
        }
        return EventToken(node.handle, in: self)
    }

    /// Enqueues `replay` to `node`'s lane, ahead of its live deliveries; each `.untilDelivered`
    /// event is held until its delivery is over (received if its handler ran).
    private func enqueueReplay<E: Sendable>(_ replay: [StickyStore.Entry], to node: Subscription<E>) {
        let holds = replay.map { entry in
            entry.takeOnce
                ? StickyHold(
                    typeID: ObjectIdentifier(E.self), key: entry.key, sequence: entry.sequence, container: self)
                : nil
        }
        let outcomes = node.enqueueReplay(replay.map { $0.event(as: E.self) }, holds: holds) ?? []
        for (hold, outcome) in zip(holds, outcomes) {
            guard let hold else { continue }
            endHolding(hold, received: outcome.ranHandler, enqueued: outcome == .enqueued ? 1 : 0)
        }
    }

    /// Delivers `replay` to `node` on this thread, in order, stopping at the first that does not
    /// reach it; settles the `.untilDelivered` events it held.
    private func deliverReplay<E: Sendable>(
        _ replay: [StickyStore.Entry], of _: E.Type, to node: SubscriptionNode
    ) {
        var delivered = 0
        for entry in replay {
            let outcome = node.deliver(event: entry.event(as: E.self))
            // Ended or owner gone: the rest would not be delivered either.
            guard outcome.isReached else {
                if outcome == .ownerGone { reclaim(CollectionOfOne(node.handle)) }
                break
            }
            delivered += 1
        }
        if replay.contains(where: \.takeOnce) {
            // The first `delivered` entries reached the subscriber; the rest did not.
            let held = replay.enumerated().lazy.filter(\.element.takeOnce).map {
                (key: $0.element.key, sequence: $0.element.sequence, received: $0.offset < delivered)
            }
            settleHeld(ObjectIdentifier(E.self), held)
        }
    }

    /// After a synchronous replay that held `.untilDelivered` events of the type `typeID` (see
    /// `StickyStore`), in one critical section: keeps each for a taker if no handler ran for it
    /// (`received` false), lets go of it otherwise.
    private func settleHeld(
        _ typeID: ObjectIdentifier, _ held: some Sequence<(key: String?, sequence: UInt64, received: Bool)>
    ) {
        withRegistry { registry in
            for entry in held {
                registry.settleHeld(typeID, key: entry.key, sequence: entry.sequence, received: entry.received)
            }
        }
    }

    /// After a dispatch that held an `.untilDelivered` event: ends `hold` (see
    /// `Registry.endHolding`).
    func endHolding(_ hold: StickyHold, received: Bool, enqueued: Int) {
        withRegistry { registry in registry.endHolding(hold, received: received, enqueued: enqueued) }
    }

    /// After a delivery enqueued holding an `.untilDelivered` event ran (`received`: its handler
    /// ran) or found its subscription ended or its owner gone: see `Registry.finishHolding`.
    func finishHolding(_ hold: StickyHold, received: Bool) {
        withRegistry { registry in registry.finishHolding(hold, received: received) }
    }

    /// Ends the subscription and forgets it, in O(1) per key, releasing what it held after
    /// unlocking. Does nothing if it has already ended.
    func remove(_ subscription: SubscriptionHandle, reason: TraceRecord.Ended.Reason) {
        withRegistry { registry in
            registry.tick(.dispose)
            registry.end(subscription, reason: reason)
        }
    }

    /// Whether the subscription is live.
    func isLive(_ subscription: SubscriptionHandle) -> Bool {
        withRegistry { registry in registry.isLive(subscription) }
    }

    /// Records that the subscription's token is held by `bag`; tells the bag at once if the
    /// subscription has already ended.
    func attach(_ subscription: SubscriptionHandle, to bag: BagTokens) {
        let attached = withRegistry { registry in registry.attach(subscription, to: bag) }
        if !attached { bag.forget(subscription.id) }
    }
}
