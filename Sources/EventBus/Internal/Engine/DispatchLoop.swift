/// What one dispatch did.
struct Tally {
    /// Deliveries started or enqueued.
    var reached = 0
    /// Of which enqueued.
    var enqueued = 0
    var isStopped = false
    /// Handed to the type's hooks (which deliver through a dispatch of their own).
    var isHooked = false

    var isDead: Bool { reached == 0 && !isStopped && !isHooked }
}

/// What a dispatch does beyond a bus's plain one: each of the core's entry points makes one. A
/// plain dispatch is `DispatchRequest(bus: bus)`.
struct DispatchRequest {
    /// The bus of a full dispatch, whose hooks, supertypes, sticky events and dead-event report
    /// apply; `nil` for a walk over one type's subscribers only (a chain node's).
    let bus: EventBus?
    /// How to keep the event, for a sticky dispatch.
    var sticky: StickyDispatch?
    /// Whether the type's hooks are passed over (they deliver through here).
    var bypassingHooks = false
    /// Whether the unkeyed subscribers are walked, as well as those of the key.
    var includingUnkeyed = true
    /// Whether only the monitors are walked (a chain's hops after a stop).
    var monitorsOnly = false
    /// Whether the event is delivered as its supertypes too (a chain's hops are not).
    var asSupertypes = true
}

// MARK: The entry points, and the one loop they share

extension BusCore {
    /// ``EventBus/dispatch(_:)``'s entry point, called from the caller's module with the event's
    /// address (taken there, where the event's type is known, at no cost).
    @usableFromInline
    func dispatch<E: Sendable>(addressOf event: UnsafePointer<E>, key: String?, on bus: EventBus) {
        dispatch(event, key: key, DispatchRequest(bus: bus))
    }

    /// ``EventBus/dispatch(_:sticky:)``'s entry point: a dispatch that keeps `event` as `sticky`
    /// says, in the critical section that finds its subscribers.
    func dispatch<E: Sendable>(_ event: E, key: String?, on bus: EventBus, sticky: StickyDispatch) {
        withUnsafePointer(to: event) { _ = dispatch($0, key: key, DispatchRequest(bus: bus, sticky: sticky)) }
    }

    /// How a type's hooks hand an event to the bus's subscribers of `key` and the unkeyed ones:
    /// a dispatch that passes the hooks over.
    func deliverPastHooks<E: Sendable>(_ event: E, key: String?, on bus: EventBus) {
        withUnsafePointer(to: event) {
            _ = dispatch($0, key: key, DispatchRequest(bus: bus, bypassingHooks: true))
        }
    }

    /// ``deliverPastHooks(_:key:on:)`` to the subscribers of `key` only (the notification bridge's
    /// sender-filtered deliveries, which unkeyed subscribers must not see twice).
    func deliverPastHooksToKeyed<E: Sendable>(_ event: E, key: String?, on bus: EventBus) {
        let request = DispatchRequest(bus: bus, bypassingHooks: true, includingUnkeyed: false)
        withUnsafePointer(to: event) { _ = dispatch($0, key: key, request) }
    }

    /// A chain hop: delivers the event at `event` to this node's subscribers of `key` and the
    /// unkeyed ones, past any hooks.
    @discardableResult
    func post<E: Sendable>(at event: UnsafePointer<E>, key: String?) -> Tally {
        dispatch(event, key: key, DispatchRequest(bus: nil, bypassingHooks: true, asSupertypes: false))
    }

    /// A chain hop after a stop or a drop: delivers the event at `event` to this node's monitors of
    /// `key` and the unkeyed ones only.
    @discardableResult
    func postToMonitors<E: Sendable>(at event: UnsafePointer<E>, key: String?) -> Tally {
        let request = DispatchRequest(bus: nil, bypassingHooks: true, monitorsOnly: true, asSupertypes: false)
        return dispatch(event, key: key, request)
    }

    /// The one dispatch. Its first steps: skip the lock if nobody listens (`findsNothing`), then,
    /// under the lock, begin (the sweep's share, the sticky keep, the route, the first chunk).
    /// Then the loop, ``deliver(_:_:key:_:)``, or the type's hooks. Its last steps: end the
    /// sticky hold, then trace and report a dead event.
    ///
    /// The event stays at `event`, unchanged, until this returns. Inlined into its entry points
    /// in release builds (a constant request then costs nothing); not in debug builds, where the
    /// stack per nested dispatch ("Guarantees") is measured without it.
    @discardableResult
    #if DEBUG
        @inline(never)
    #else
        @inline(__always)
    #endif
    private func dispatch<E: Sendable>(_ event: UnsafePointer<E>, key: String?, _ request: DispatchRequest) -> Tally {
        let sticky = request.sticky
        let typeID = ObjectIdentifier(E.self)
        var ticks = 1
        if sticky == nil, request.bus != nil, !request.bypassingHooks, snapshot.findsNothing(typeID) {
            // Nobody to deliver to, nothing to report: only the bookkeeping's share is left, paid
            // for all of them by every `idleTickInterval`th such dispatch.
            guard idleDispatches.add(1) % Self.idleTickInterval == 0 else { return Tally() }
            ticks = Self.idleTickInterval
        }
        let (tally, reports) = withUnsafeTemporaryAllocation(
            of: Unmanaged<SubscriptionNode>.self, capacity: Dispatch.firstChunkCapacity
        ) { chunk in
            var dispatch = Dispatch(request, chunk: chunk)
            let start = withRegistry { registry in
                registry.beginDispatch(event, key: key, request, ticks: ticks, &dispatch)
            }
            if start.held != 0 { dispatch.hold = makeHold(typeID, key: key, sequence: start.held) }
            var tally = Tally()
            switch start.route {
            case .subscribers:
                deliver(&dispatch, UnsafeRawPointer(event), key: key, nil)
                tally = dispatch.tally
            case .subscribersAndSupertypes(let home):
                deliverFanningOut(&dispatch, UnsafeRawPointer(event), key: key, home: home)
                tally = dispatch.tally
            case .hooks(let bucket):
                tally.isHooked = true
                handOver(event, to: bucket.bucket, refusingSticky: sticky != nil)
            case .nothing:
                break
            }
            if let hold = dispatch.hold {
                // Received if a handler ran; the deliveries it enqueued say later whether theirs did.
                endHolding(hold, tally)
            }
            return (tally, start.reports)
        }
        // Once the chunk and the dispatch are gone: the report's arguments take their place.
        if reports != 0 { report(reports, event, key: key, DispatchReport(tally: tally, sticky: sticky)) }
        return tally
    }

    /// The loop: deliver the chunk (no lock held), then lock → advance → unlock, until the
    /// dispatch is done. `subjects`: the supertypes of a dispatch that fans out. When the walk goes
    /// on past the dispatch's own small chunk, the loop goes on in a frame of its own with a large
    /// one (``deliverInLargeChunk(_:_:key:_:)``). In a frame of its own: the dispatch's, on the
    /// stack while handlers run (and dispatch again), keeps only the chunk and the dispatch.
    @inline(never)
    private func deliver(
        _ dispatch: inout Dispatch, _ event: UnsafeRawPointer, key: String?, _ subjects: SupertypeSubjects?
    ) {
        while true {
            if dispatch.count > 0 {
                let subject =
                    dispatch.subject == 0 ? event : Self.address(of: dispatch.subject, in: subjects, event: event)
                let dead = dispatch.deliverChunk(subject)
                if dead != 0 { reclaim(dead, of: dispatch.chunk, count: dispatch.count) }
                if dispatch.isRetained {
                    dispatch.endChunk()
                    return
                }
                if dispatch.cursor != nil && !dispatch.isLargeChunk {
                    deliverInLargeChunk(&dispatch, event, key: key, subjects)
                    return
                }
            } else if dispatch.phase == .done {
                return
            }
            advance(&dispatch, key: key, subjects)
        }
    }

    /// The address of supertype `subject`'s value (made the first time: user code). Off the
    /// loop's frame.
    @inline(never)
    private static func address(
        of subject: UInt8, in subjects: SupertypeSubjects?, event: UnsafeRawPointer
    ) -> UnsafeRawPointer {
        // Only a dispatch that fans out has subjects beyond 0, and its loop has them.
        subjects.unsafelyUnwrapped.address(of: subject, event: event)
    }

    /// The loop's lock → advance → unlock. In a frame of its own: the loop's, on the stack while
    /// handlers run, does not hold the registry's.
    @inline(never)
    private func advance(_ dispatch: inout Dispatch, key: String?, _ subjects: SupertypeSubjects?) {
        withRegistry { registry in registry.advanceDispatch(&dispatch, key: key, subjects: subjects) }
    }

    /// Reclaims the subscriptions of `dispatch`'s chunk whose bit is set in `dead` (owner gone).
    /// Off the loop's frame, as ``advance(_:key:_:)``.
    @inline(never)
    private func reclaim(_ dead: UInt64, of chunk: UnsafeMutablePointer<Unmanaged<SubscriptionNode>>, count: UInt8) {
        reclaim(Dispatch.handles(dead, of: chunk, count: count))
    }

    /// The loop of a dispatch that fans out to supertypes: their values are made as their walks
    /// reach subscribers (user code, no lock held).
    @inline(never)
    private func deliverFanningOut(
        _ dispatch: inout Dispatch, _ event: UnsafeRawPointer, key: String?, home: Registry.LastingBucket
    ) {
        // A `.subscribersAndSupertypes` route is only made for a bucket with supertypes.
        let subjects = home.bucket.supertypes.unsafelyUnwrapped.subjects(home: home)
        deliver(&dispatch, event, key: key, subjects)
    }

    /// The loop's continuation past the dispatch's own (small) chunk: in a frame of its own, the
    /// rest is delivered in chunks of `chunkCapacity`.
    @inline(never)
    private func deliverInLargeChunk(
        _ dispatch: inout Dispatch, _ event: UnsafeRawPointer, key: String?, _ subjects: SupertypeSubjects?
    ) {
        withUnsafeTemporaryAllocation(of: Unmanaged<SubscriptionNode>.self, capacity: Dispatch.chunkCapacity) { large in
            withRegistry { registry in registry.advanceDispatch(&dispatch, key: key, subjects: subjects, into: large) }
            deliver(&dispatch, event, key: key, subjects)
        }
    }

    /// The hold of an `.untilDelivered` event a dispatch holds (see ``StickyHold``), retained: the
    /// dispatch releases it after its last walk. Off the plain dispatch path.
    @inline(never)
    // Unmanaged: see `Dispatch.hold`.
    private func makeHold(_ typeID: ObjectIdentifier, key: String?, sequence: UInt64) -> Unmanaged<StickyHold> {
        Unmanaged.passRetained(StickyHold(typeID: typeID, key: key, sequence: sequence, container: self))
    }

    /// After a dispatch that held an `.untilDelivered` event: releases its hold, received if a
    /// handler ran (the deliveries it enqueued say later whether theirs did). Off the dispatch's
    /// frame.
    @inline(never)
    // Unmanaged: the dispatch's hold (see `Dispatch.hold`), released here.
    private func endHolding(_ hold: Unmanaged<StickyHold>, _ tally: Tally) {
        endHolding(hold.takeRetainedValue(), received: tally.reached > tally.enqueued, enqueued: tally.enqueued)
    }

    /// What ``report(_:_:key:_:)`` reports of a dispatch. More than 4 words, so passed by address:
    /// as arguments of their own, they took stack slots in the dispatch's frame.
    private struct DispatchReport {
        let tally: Tally
        let sticky: StickyDispatch?
    }

    /// After a dispatch: hands it to the tracer (`reports` bit 2) and, if it reached nobody, to the
    /// dead-event handler (bit 1).
    @inline(never)
    private func report<E: Sendable>(
        _ reports: UInt8, _ event: UnsafePointer<E>, key: String?, _ dispatched: DispatchReport
    ) {
        if reports & 2 != 0 { traceDispatch(E.self, key: key, dispatched.tally, sticky: dispatched.sticky) }
        if reports & 1 != 0 && dispatched.tally.isDead { reportDead(event.pointee, key: key) }
    }

    /// Hands the event at `event` to the hooks of `bucket`'s type (which deliver it through a
    /// dispatch of their own), having them report first that it cannot be kept if it was sticky.
    @inline(never)
    private func handOver<E: Sendable>(_ event: UnsafePointer<E>, to bucket: Bucket, refusingSticky: Bool) {
        // A `.hooks` route is only made for a bucket with hooks.
        let hooks = bucket.hooks.unsafelyUnwrapped
        if refusingSticky { hooks.refuseSticky() }
        hooks.dispatch(event.pointee)
    }
}
