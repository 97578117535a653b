extension Registry {
    /// What a dispatch does once it has let go of the lock: the value ``beginDispatch(_:key:_:ticks:plan:)``
    /// returns.
    struct DispatchStart {
        /// Where the event goes.
        var route: Route = .nothing
        /// What the dispatch reports after delivering: bit 1, a dead event if it reached nobody
        /// (a dead-event handler is set); bit 2, a record (a tracer is set).
        var reports: UInt8 = 0
        /// The sequence of the `.untilDelivered` event the dispatch kept and holds until it has
        /// delivered it (0: none): kept for a taker if it reached nobody.
        var held: UInt64 = 0
    }

    /// Where a dispatch's event goes.
    enum Route {
        /// To the subscribers the plan holds.
        case plan
        /// To the subscribers the plan holds, then to the supertypes'.
        case planThenSupertypes(LastingBucket)
        /// Nowhere: no subscriber, no hooks, no supertypes.
        case nothing
        /// To the type's hooks.
        case hooks(LastingBucket)
    }

    /// The bucket of an event type with hooks or supertypes, read after unlocking: such a bucket
    /// is never removed while the bus lives (see `Bucket.isRemovable`), and its hooks and
    /// supertypes are constants, so neither the lock nor a reference is needed (a reference would
    /// make every route, the plain dispatch's too, cost a release).
    struct LastingBucket {
        // unowned(unsafe): never removed while the bus lives (above), and a dispatch that has this
        // runs on the bus (its caller holds it).
        unowned(unsafe) let bucket: Bucket
    }

    /// Begin a dispatch: the sweep step of `ticks` dispatches, then the first chunk of `E`'s
    /// subscribers of `key` that `request` walks, into `plan` (see ``DispatchPlan``); a sticky
    /// request keeps the event at `event` too, in the same step. Makes `E`'s bucket if it has none
    /// and the request needs one (a sticky event to keep, hooks or supertypes to find). O(chunk).
    @inline(__always)
    mutating func beginDispatch<E: Sendable>(
        _ event: UnsafePointer<E>, key: String?, _ request: BusCore.DispatchRequest, ticks: Int,
        plan: inout DispatchPlan
    ) -> DispatchStart {
        let (bus, sticky) = (request.bus, request.sticky)
        tick(.dispatch, times: ticks)
        var start = DispatchStart()
        // A sticky dispatch is never a dead event.
        if bus != nil { start.reports = reports & (sticky == nil ? 3 : 2) }
        var found = unmanagedBucket(for: ObjectIdentifier(E.self))
        if found == nil, let bus, sticky != nil || needsBucket(E.self) {
            found = unmanagedBucket(for: E.self, on: bus)
        }
        guard let found else { return start }
        // Unmanaged: the registry holds its buckets, and the lock is held.
        return found._withUnsafeGuaranteedRef { bucket in
            var supertypes = false
            if !bucket.isPlain {
                if bucket.hooks != nil, !request.bypassingHooks {
                    start.route = .hooks(LastingBucket(bucket: bucket))
                    return start
                }
                supertypes = bus != nil && bucket.supertypes != nil
            }
            if case .all = request.walk {} else { plan.limit(to: request.walk) }
            // With supertypes, the monitors come after the supertypes' handlers (`deliver`).
            if supertypes { plan.limit(to: .handlers(stopped: false, upTo: .max)) }
            plan.start(in: bucket, key: key, lastID: lastID, registry: &self)
            if let sticky {
                // A supertype's subscriber receiving it counts too.
                let mayBeReceived =
                    !supertypes ? plan.foundSubscribers : receives(key, in: bucket, orIn: sticky.supertypeIDs)
                start.held = storeSticky(event, key: key, (sticky.policy, mayBeReceived), in: bucket)
            }
            start.route = supertypes ? .planThenSupertypes(LastingBucket(bucket: bucket)) : .plan
            return start
        }
    }

    /// Continue a dispatch: unpins the chunk `plan` delivered (a node that ended meanwhile is
    /// unlinked now) and takes the next, into `chunk` if given (a larger buffer than the
    /// dispatch's own: see ``DispatchPlan``). O(chunk).
    mutating func continueDispatch(
        _ plan: inout DispatchPlan, key: String?,
        into chunk: UnsafeMutableBufferPointer<Unmanaged<SubscriptionNode>>? = nil
    ) {
        plan.next(key: key, into: chunk, registry: &self)
    }
}
