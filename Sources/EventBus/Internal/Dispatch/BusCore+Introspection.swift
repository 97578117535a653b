/// What the bus shows of itself: counts, subscription infos, handler errors, the sticky events
/// kept, and the probes tests read. Each a registry operation under the lock.
extension BusCore {
    /// What introspection shows of the subscription, if it is live.
    func info(_ subscription: SubscriptionHandle) -> SubscriptionInfo? {
        withRegistry { registry in registry.primary(of: subscription) }?.info()
    }

    /// A delivery was enqueued in a mailbox (`EventBusTesting`'s `settle()`); returns its ticket,
    /// which the drain finishes (``InFlightDeliveries/finished(_:count:)``).
    func deliveryEnqueued() -> InFlightTicket {
        inFlight.enqueued()
    }

    /// A subscription's bound dropped a delivery: counted, and traced. No lock held.
    func noteDropped(from node: SubscriptionNode, type: Any.Type, buffering: EventBuffering) {
        let total = droppedDeliveries.add(1)
        trace(.dropped(TraceRecord.Dropped(type: type, subscriptionID: node.id, buffering: buffering, total: total)))
    }

    /// An enqueued delivery ended without running.
    func noteEndedUnrun() {
        endedUnrunDeliveries.add(1)
    }

    /// The last handler errors (at most 64) and how many there were in all.
    var handlerErrors: (recent: [HandlerError], count: Int) {
        withRegistry { registry in (registry.recentHandlerErrors, registry.handlerErrorCount) }
    }

    /// The live subscriptions (of `typeID` only, if given), in subscription order. O(N): the lock
    /// is taken for 256 slots at a time; the infos are built with no lock held.
    func subscriptionInfos(ofTypeID typeID: ObjectIdentifier?) -> [SubscriptionInfo] {
        var found: [SubscriptionNode] = []
        var next: UInt32? = 0
        while let start = next {
            next = withRegistry { registry in
                registry.primaries(from: start, limit: 256, ofTypeID: typeID, into: &found)
            }
        }
        return found.map { $0.info() }.sorted { $0.id < $1.id }
    }

    /// The hooks of `E` on this bus, making its bucket if needed; `E` must be a ``HookedEvent``.
    func hooks<E: Event>(of _: E.Type, on bus: EventBus) -> any EventTypeHooks {
        let hooks = withRegistry { registry in registry.bucket(for: E.self, on: bus).hooks }
        guard let hooks else { preconditionFailure("EventBus: \(E.self) is not a hooked event type") }
        return hooks
    }

    /// The number of live subscriptions, internal ones excluded. O(1).
    var count: Int { withRegistry { registry in registry.subscriptionCount - registry.internalCount } }

    /// The number of sticky events on the bus, after letting go of the expired ones.
    var stickyCount: Int { afterExpiringDueSticky { registry in registry.stickyCount } }

    /// The number of sticky events of `E`, after letting go of the expired ones.
    func stickyCount<E: Sendable>(of _: E.Type) -> Int {
        afterExpiringDueSticky { registry in registry.stickyStore(of: E.self)?.count ?? 0 }
    }

    /// Sticky events a count lets go of at most per critical section (see
    /// ``afterExpiringDueSticky(_:)``).
    static let stickyExpiryBatch = 64

    /// Lets go of every expired sticky event still queued, `stickyExpiryBatch` at most per
    /// critical section (the lock is let go of between batches, as `purge` does), and runs `body`
    /// in the one that found none due. O(1) amortised: each step follows the dispatch that queued
    /// or postponed the item.
    private func afterExpiringDueSticky<R>(_ body: (inout Registry) -> R) -> R {
        while true {
            let result: R? = withRegistry { registry in
                registry.expireSticky(limit: Self.stickyExpiryBatch) ? body(&registry) : nil
            }
            if let result { return result }
            Locked<Registry>.yieldToWaiters()
        }
    }

    /// Removes every sticky event of the bus.
    func removeAllSticky() {
        withRegistry { registry in registry.removeAllSticky() }
    }

    /// The number of live subscriptions to the type `typeID`. O(1).
    func count(ofTypeID typeID: ObjectIdentifier) -> Int {
        withRegistry { registry in registry.bucket(for: typeID)?.subscriptionCount ?? 0 }
    }

    /// `count(ofTypeID:)`, internal subscriptions excluded. O(1).
    func userCount(ofTypeID typeID: ObjectIdentifier) -> Int {
        withRegistry { registry in registry.bucket(for: typeID).map { $0.subscriptionCount - $0.internalCount } ?? 0
        }
    }

    /// See `Registry.dispatchesPerSweepTurn`; plus the dispatches that skipped the lock whose share
    /// a later one pays (at most `idleTickInterval - 1`).
    var dispatchesPerSweepTurn: Int {
        withRegistry { registry in registry.dispatchesPerSweepTurn } + Self.idleTickInterval - 1
    }

    /// The summary ``RegistrySnapshot/mayHaveBucket(_:)`` reads (tests).
    var typeSummaryBits: Int { snapshot.typeSummary.current }

    /// The number of event types with a bucket (tests of bucket removal).
    var bucketCount: Int { withRegistry { registry in registry.bucketCount } }

    /// The number of items in the sticky events' expiry queue (tests of its bound).
    var stickyExpiryCount: Int { withRegistry { registry in registry.expiryCount } }

    /// The slots of the table of keys of `typeID`'s bucket, 0 if it has none (tests of shrinking).
    func keyedCapacity(ofTypeID typeID: ObjectIdentifier) -> Int {
        withRegistry { registry in registry.bucket(for: typeID)?.keyedCapacity ?? 0 }
    }

    /// The slot table's allocated pages (tests of their release).
    var slotPageCount: Int { withRegistry { registry in registry.slotPageCount } }
}
