extension Registry {
    /// What a dispatch does once it has let go of the lock: the value
    /// ``beginDispatch(_:key:_:ticks:_:)`` returns.
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
        /// To the subscribers the dispatch walks.
        case subscribers
        /// To the subscribers the dispatch walks, its supertypes' among them (their values are
        /// made after unlocking, from the bucket's fan-out).
        case subscribersAndSupertypes(LastingBucket)
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

    /// Begins a dispatch: the sweep step of `ticks` dispatches, then the first chunk of `E`'s
    /// subscribers of `key` that `request` walks, into `dispatch`; a sticky request keeps the event
    /// at `event` too, in the same step. Makes `E`'s bucket if it has none and the request needs
    /// one (a sticky event to keep, hooks or supertypes to find). O(chunk).
    @inline(__always)
    mutating func beginDispatch<E: Sendable>(
        _ event: UnsafePointer<E>, key: String?, _ request: DispatchRequest, ticks: Int, _ dispatch: inout Dispatch
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
        dispatch.maxID = lastID
        guard let found else {
            dispatch.phase = .done
            return start
        }
        // Unmanaged: the registry holds its buckets, and the lock is held.
        return found._withUnsafeGuaranteedRef { bucket in
            if !bucket.isPlain {
                if bucket.hooks != nil, !request.bypassingHooks {
                    start.route = .hooks(LastingBucket(bucket: bucket))
                    dispatch.phase = .done
                    return start
                }
                dispatch.fansOut = request.asSupertypes && bucket.supertypes != nil
            }
            enterWalk(of: bucket, dispatch: &dispatch, key: key)
            if dispatch.fansOut {
                // The supertypes' walks need their types, read after unlocking.
                fill(&dispatch, key: key, subjects: nil)
            } else if bucket.linkedCount == 1 {
                takeSoleNode(of: bucket, dispatch: &dispatch, key: key)
            } else {
                fill(&dispatch, key: key, subjects: nil)
            }
            if let sticky {
                // A supertype's subscriber receiving it counts too.
                let mayBeReceived =
                    dispatch.fansOut
                    ? receives(key, in: bucket, orIn: sticky.supertypeIDs) : dispatch.count > 0
                start.held = storeSticky(event, key: key, (sticky.policy, mayBeReceived), in: bucket)
            }
            start.route = dispatch.fansOut ? .subscribersAndSupertypes(LastingBucket(bucket: bucket)) : .subscribers
            return start
        }
    }

    /// Advances a dispatch: unpins the chunk it delivered (a node that ended meanwhile is unlinked
    /// now), then takes the next chunk, into `large` if given (a larger buffer than the dispatch's
    /// own), moving on to the next phase where a walk ends (`subjects`: the supertypes of a dispatch
    /// that fans out). Sets the phase to `done` when nothing is left. O(chunk), plus O(1) per
    /// supertype passed over.
    mutating func advanceDispatch(
        _ dispatch: inout Dispatch, key: String?, subjects: SupertypeSubjects?, into large: Dispatch.Chunk? = nil
    ) {
        if !dispatch.isRetained, let bucket = dispatch.bucket {
            // Unmanaged: a bucket with a pinned node is not removed.
            let (chunk, count) = (dispatch.chunk, Int(dispatch.count))
            bucket._withUnsafeGuaranteedRef { bucket in
                for i in 0..<count { unpin(chunk[i], in: bucket) }
            }
        }
        dispatch.count = 0
        if let large {
            // unsafelyUnwrapped: a temporary allocation of a non-zero capacity has a base address.
            dispatch.chunk = large.baseAddress.unsafelyUnwrapped
            dispatch.isLargeChunk = true
        }
        fill(&dispatch, key: key, subjects: subjects)
    }

    /// Starts the walk of `bucket`'s lists that the dispatch's phase takes.
    @inline(__always)
    private func enterWalk(of bucket: Bucket, dispatch: inout Dispatch, key: String?) {
        dispatch.bucket = Unmanaged.passUnretained(bucket)  // Unmanaged: see `Dispatch.bucket`
        let levels = bucket.levelBits
        var lists = (key == nil ? 0 : levels) | (dispatch.includingUnkeyed ? levels << 1 : 0)
        if dispatch.fansOut {
            // The monitors come after every handler, the supertypes' too.
            lists &= dispatch.walksHandlers ? Dispatch.handlerLists : ~Dispatch.handlerLists
        }
        if dispatch.isStopped { lists &= ~Dispatch.handlerLists }
        dispatch.lists = lists
    }

    /// `beginDispatch`'s shortcut when `bucket` has a single node linked: the dispatch is that node,
    /// if the walk takes its list, so there is no list to walk and nothing to pin; it is retained
    /// as a last chunk of one (the lock is taken once).
    @inline(__always)
    private func takeSoleNode(of bucket: Bucket, dispatch: inout Dispatch, key: String?) {
        let level = bucket.levelBits
        let deliveryLevel = DeliveryLevel(rawValue: UInt8(truncatingIfNeeded: level.trailingZeroBitCount >> 1))
        // Unmanaged: under the lock, a linked node is kept alive by its list.
        var sole: Unmanaged<SubscriptionNode>?
        if dispatch.lists & (level << 1) != 0 { sole = bucket.unmanagedHead(of: nil, at: deliveryLevel) }
        // The key's list is in `lists` only when there is a key.
        if sole == nil && dispatch.lists & level != 0 { sole = bucket.unmanagedHead(of: key, at: deliveryLevel) }
        dispatch.lists = 0
        dispatch.phase = .done
        let maxID = dispatch.maxID
        // As the walk takes a node: live, and subscribed before the dispatch started.
        guard let sole, sole._withUnsafeGuaranteedRef({ $0.isLive && $0.id <= maxID }) else { return }
        _ = sole.retain()
        dispatch.chunk[0] = sole
        dispatch.count = 1
        dispatch.isRetained = true
    }

    /// Takes the next chunk of live subscriptions into the dispatch (empty), walking on from its
    /// cursor, to the end of its walk's lists, then (for a dispatch that fans out, once `subjects`
    /// are known) into the next phases; a chunk holds one subject's nodes only.
    private mutating func fill(_ dispatch: inout Dispatch, key: String?, subjects: SupertypeSubjects?) {
        while true {
            if dispatch.lists == 0 && dispatch.cursor == nil {
                guard dispatch.fansOut else {
                    dispatch.phase = .done
                    break
                }
                // A chunk holds one subject's nodes: deliver them before walking on.
                guard dispatch.count == 0, let subjects else { break }
                guard enterNextWalk(&dispatch, key: key, subjects) else { break }
            }
            walkLists(&dispatch, key: key)
            if dispatch.cursor != nil { break }
        }
        // A last chunk of a few nodes is retained, so that no lock is needed after it; the others
        // stay pinned (for more than a few, a pin and an unpin under a lock taken once more cost
        // less than a retain and a release each). A live node was not marked to be unlinked when
        // unpinned (only an ended one is), so dropping its pin here needs no check.
        dispatch.isRetained = dispatch.phase == .done && Int(dispatch.count) <= Dispatch.retainedChunkLimit
        if dispatch.isRetained {
            for i in 0..<Int(dispatch.count) { dropPin(retaining: dispatch.chunk[i]) }
        }
    }

    /// Moves a dispatch that fans out to the next walk that has lists to take: the supertypes'
    /// handlers (skipped once it is stopped), its own monitors, the supertypes' monitors. Returns
    /// `false`, the phase `done`, when there is none. O(1) per supertype passed over.
    private mutating func enterNextWalk(_ dispatch: inout Dispatch, key: String?, _ subjects: SupertypeSubjects) -> Bool
    {
        let last = subjects.count
        while true {
            switch dispatch.phase {
            case .handlers: (dispatch.phase, dispatch.subject) = (.supertypeHandlers, 1)
            case .supertypeHandlers:
                if Int(dispatch.subject) < last {
                    dispatch.subject &+= 1
                } else {
                    (dispatch.phase, dispatch.subject) = (.monitors, 0)
                }
            case .monitors: (dispatch.phase, dispatch.subject) = (.supertypeMonitors, 1)
            case .supertypeMonitors:
                if Int(dispatch.subject) < last {
                    dispatch.subject &+= 1
                } else {
                    dispatch.phase = .done
                }
            case .done: return false
            }
            if dispatch.phase == .done { return false }
            if dispatch.subject > last || (dispatch.isStopped && dispatch.walksHandlers) { continue }
            let bucket =
                dispatch.subject == 0
                ? subjects.home.bucket
                : unmanagedBucket(for: subjects.typeID(of: dispatch.subject))?.takeUnretainedValue()
            guard let bucket else { continue }
            enterWalk(of: bucket, dispatch: &dispatch, key: key)
            if dispatch.lists != 0 { return true }
        }
    }

    /// Walks the dispatch's lists from its cursor (or the head of its lowest list), taking live
    /// subscriptions into its chunk until it is full (the next node is then pinned as its cursor)
    /// or the lists end.
    @inline(__always)
    private mutating func walkLists(_ dispatch: inout Dispatch, key: String?) {
        // Unmanaged: a bucket with a pinned node (the cursor) is not removed; otherwise the walk
        // has just entered it under this lock.
        guard let unmanagedBucket = dispatch.bucket else { return }
        unmanagedBucket._withUnsafeGuaranteedRef { bucket in
            // The walk's state in locals: a store into the chunk could alias the dispatch's fields,
            // which would be reloaded on every step otherwise.
            let slots = dispatch.chunk
            let capacity = dispatch.isLargeChunk ? Dispatch.chunkCapacity : Dispatch.firstChunkCapacity
            let maxID = dispatch.maxID
            var lists = dispatch.lists
            var count = Int(dispatch.count)
            // The walk holds no references: under the lock, linked nodes are kept alive by their
            // list (`Unmanaged`, so that reading a link costs no reference counting).
            var node: Unmanaged<SubscriptionNode>?  // Unmanaged: under the lock, kept alive by its list
            if dispatch.isStopped && lists & Dispatch.handlerLists != 0 {
                // Stopped: the handlers left are skipped, the monitors' walk starts.
                if let cursor = dispatch.cursor { unpin(cursor, in: bucket) }
                dispatch.cursor = nil
                lists &= ~Dispatch.handlerLists
                node = Self.head(of: bucket, key: key, lists: lists)
            } else if let resumed = dispatch.cursor {
                // Resumed where the last chunk filled: the cursor (pinned, so still linked; its id
                // was checked) is taken if live, then let go of once its successor is read.
                dispatch.cursor = nil
                let (isLive, next) = resumed._withUnsafeGuaranteedRef { ($0.isLive, $0.next) }
                if isLive {
                    pin(resumed)
                    slots[count] = resumed
                    count &+= 1
                }
                node = next
                unpin(resumed, in: bucket)
            } else {
                node = Self.head(of: bucket, key: key, lists: lists)
            }
            walk: while lists != 0 {
                while let current = node {
                    let (id, isLive, next) = current._withUnsafeGuaranteedRef { ($0.id, $0.isLive, $0.next) }
                    // The rest of the list subscribed after the dispatch started.
                    guard id <= maxID else { break }
                    if count == capacity {
                        pin(current)
                        dispatch.cursor = current
                        break walk
                    }
                    if isLive {
                        pin(current)
                        slots[count] = current
                        count &+= 1
                    }
                    node = next
                }
                lists &= lists &- 1
                node = Self.head(of: bucket, key: key, lists: lists)
            }
            dispatch.lists = lists
            dispatch.count = UInt8(truncatingIfNeeded: count)
        }
    }

    /// The first node of the lowest list in `lists` (see `Dispatch.lists`), `nil` if it is empty or
    /// `lists` is.
    @inline(__always)
    // Unmanaged: read under the lock, while the list holds the node (see `SubscriberList`).
    private static func head(of bucket: Bucket, key: String?, lists: UInt16) -> Unmanaged<SubscriptionNode>? {
        guard lists != 0 else { return nil }
        let list = lists.trailingZeroBitCount
        let level = DeliveryLevel(rawValue: UInt8(truncatingIfNeeded: list >> 1))
        // A keyed list's bit is only set when there is a key.
        return bucket.unmanagedHead(of: list & 1 == 0 ? key : nil, at: level)
    }
}
