internal import _EventBusShims

/// The bus's registry, the state behind its lock: event type → bucket (key → subscriber list), the
/// ring of owned subscriptions the incremental sweep walks, and the queue of empty buckets.
///
/// A state machine: every operation is a method that runs under the bus's lock, runs no user code,
/// and is O(1) (O(keys) for a multi-key subscription); what it leaves to do after unlocking, it
/// returns (a dispatch's route, a replay's events, a read's value) or adds to ``afterUnlock``
/// (objects to release, bags to tell, owners to check, records to trace), which the executor,
/// `BusCore`, takes out before unlocking and performs after. It is tested directly, without a lock
/// or a thread (`RegistryStateMachineTests`, `RegistryModelTests`).
struct Registry {
    private var buckets: [ObjectIdentifier: Bucket] = [:]
    /// A direct-mapped cache in front of `buckets`: hashing an `ObjectIdentifier` costs more than
    /// the rest of a dispatch to one subscriber. A removed bucket leaves its slot.
    // Unmanaged: `buckets` holds every bucket in the cache (a removed bucket leaves it first), and
    // reading one then costs no reference counting.
    private var recentBuckets = ContiguousArray<Unmanaged<Bucket>?>(repeating: nil, count: Registry.recentBucketsCount)
    private static let recentBucketsCount = 32  // a power of two
    /// What the core reads without the lock (see ``RegistrySnapshot``), published here: the
    /// summary of the types with a bucket (`summaryMask`, or every bit while a tracer or a
    /// dead-event handler is set, so that a chain post takes the lock of a traced node and a
    /// dispatch nobody receives takes it to report it), the unhooked types, whether a context
    /// propagator is set.
    let snapshot = RegistrySnapshot()
    /// Bit `summaryBit(of:)` is set while a type with that bit has a bucket. `summaryCounts[bit]`:
    /// how many buckets have that bit.
    private var summaryMask = 0
    private var summaryCounts = ContiguousArray<UInt32>(repeating: 0, count: 64)

    /// Live subscriptions (their primary node) by slot: how tokens reach them. A token's handle
    /// also carries the id, so a reused slot never answers for an ended subscription.
    private var slots = SlotTable()
    /// Live subscriptions on the bus.
    private(set) var subscriptionCount = 0
    /// The highest subscription id registered on this bus: a dispatch delivers to ids up to the
    /// value it saw when it started.
    private(set) var lastID: UInt64 = 0
    /// Bus operations so far (the clock of the empty-bucket queue).
    private var operations: UInt64 = 0
    /// What the operations since the executor last took it leave to do after unlocking.
    private(set) var afterUnlock = AfterUnlock()

    // The ring of owned primaries (circular, through `nextOwned`/`previousOwned`), and the sweep's
    // position in it: the next node to check. New nodes go just before the cursor, so a full turn
    // checks every node that existed when it began.
    private(set) var ownedCount = 0
    private var sweepCursor: SubscriptionNode?
    /// Sweep work owed, in eighths of a node: subscribe adds 16, dispose 8, dispatch 2.
    private var sweepCredit = 0
    /// Main-bound owners the sweep skipped off the main queue since the last sweep there.
    private var mainBoundSkipped = 0
    /// Whether a sweep pass on the main queue is scheduled.
    private(set) var mainSweepScheduled = false

    /// The main queue's sweep pass scheduled by ``mainSweepDue(force:)`` has started.
    mutating func mainSweepStarted() {
        mainSweepScheduled = false
    }

    /// The bus's dead-event and handler-error handlers (here, so that a dispatch learns whether it
    /// must report a dead event in the critical section it already has).
    private(set) var deadEventHandler: (@Sendable (DeadEvent) -> Void)? {
        didSet { updateReports() }
    }
    /// The bus's tracer; see `EventBus.tracer`.
    private(set) var tracer: (@Sendable (TraceRecord) -> Void)? {
        didSet { updateReports() }
    }
    /// The bus's context propagator; see `EventBus.contextPropagator` (read by
    /// `BusCore.captureContext()` only while `BusCore.propagates` says one is set).
    private(set) var contextPropagator: (any EventContextPropagator)? {
        didSet { snapshot.propagates.store(contextPropagator == nil ? 0 : 1) }
    }
    /// What a dispatch reports after unlocking (read by every dispatch without copying a closure):
    /// bit 1, a dead event (`deadEventHandler` or `tracer` is set: a tracer sees every dead event,
    /// with or without a handler); bit 2, a record (`tracer` is set).
    private(set) var reports: UInt8 = 0
    /// Whether `tracer` is set.
    var hasTracer: Bool { reports & 2 != 0 }

    private mutating func updateReports() {
        let traces = tracer != nil
        reports = (deadEventHandler != nil || traces ? 1 : 0) | (traces ? 2 : 0)
        publishSummary()
    }
    /// The last handler errors (at most `recentHandlerErrorsLimit`), and how many there were.
    private(set) var recentHandlerErrors: [HandlerError] = []
    private(set) var handlerErrorCount = 0
    static let recentHandlerErrorsLimit = 64
    /// Live internal subscriptions (`markedInternal()`), counted in `subscriptionCount` too.
    private(set) var internalCount = 0
    private(set) var handlerErrorHandler: (@Sendable (HandlerError) -> Void)?

    // MARK: Configuration

    /// Sets the tracer; returns the one it replaces, for the caller to release after unlocking.
    mutating func replaceTracer(
        with tracer: (@Sendable (TraceRecord) -> Void)?
    ) -> (@Sendable (TraceRecord) -> Void)? {
        defer { self.tracer = tracer }
        return self.tracer
    }

    /// Sets the dead-event handler; returns the one it replaces, to be released after unlocking.
    mutating func replaceDeadEventHandler(
        with handler: (@Sendable (DeadEvent) -> Void)?
    ) -> (@Sendable (DeadEvent) -> Void)? {
        defer { deadEventHandler = handler }
        return deadEventHandler
    }

    /// Sets the handler-error handler; returns the one it replaces, to be released after unlocking.
    mutating func replaceHandlerErrorHandler(
        with handler: (@Sendable (HandlerError) -> Void)?
    ) -> (@Sendable (HandlerError) -> Void)? {
        defer { handlerErrorHandler = handler }
        return handlerErrorHandler
    }

    /// Sets the context propagator; returns the one it replaces, to be released after unlocking.
    mutating func replaceContextPropagator(
        with propagator: (any EventContextPropagator)?
    ) -> (any EventContextPropagator)? {
        defer { contextPropagator = propagator }
        return contextPropagator
    }

    // Sticky events: the clock of their TTL, their counter (orders them across keys), and the
    // queue of the slots with a TTL event (one item each, kept in step by their stores), which the
    // sweep empties as they expire.
    let clock: StickyClock
    private var stickySequence: UInt64 = 0
    private let expiries = ExpiryQueue()
    /// Sticky events kept on the bus (expired ones until they are let go of).
    private(set) var stickyCount = 0

    /// Buckets that became empty, oldest first; removed once empty for `emptyBucketGrace` operations.
    private var emptyBuckets = ContiguousArray<Bucket>()
    private var emptyBucketsHead = 0
    static let emptyBucketGrace: UInt64 = 64

    /// Expired sticky events an operation lets go of at most (see ``expireSticky(limit:)``).
    static let expiriesPerOperation = 2

    /// Sweep weights, in eighths of a node.
    enum Work: Int {
        case subscribe = 16
        case dispose = 8
        case dispatch = 2
    }

    init(clock: StickyClock) {
        self.clock = clock
    }

    /// What the operations made under this hold of the lock leave to do once it is let go of,
    /// taken out (the executor calls it last, before unlocking, and performs it after).
    @inline(__always)
    mutating func takeAfterUnlock() -> AfterUnlock {
        afterUnlock.take()
    }

    /// Makes `prepared` (empty, with room made before the lock was taken) the carrier of what the
    /// next operations leave to do after unlocking.
    mutating func reserveAfterUnlock(_ prepared: AfterUnlock) {
        afterUnlock = prepared
    }

    /// How many dispatches (the operation that pays least) make the sweep check every owned
    /// subscription once: the bound on how long a dead owner's handler outlives it with no
    /// dispatch of its own type (subscribes and disposes pay 8 and 4 times more).
    var dispatchesPerSweepTurn: Int { ownedCount * 8 / Work.dispatch.rawValue }

    // MARK: Buckets

    /// The bucket of `typeID`, if any, through the cache.
    @inline(__always)
    mutating func bucket(for typeID: ObjectIdentifier) -> Bucket? {
        unmanagedBucket(for: typeID)?.takeUnretainedValue()
    }

    /// ``bucket(for:)``, unretained: valid under the lock until the registry changes.
    @inline(__always)
    // Unmanaged: `buckets` holds it.
    mutating func unmanagedBucket(for typeID: ObjectIdentifier) -> Unmanaged<Bucket>? {
        let slot = Self.slot(of: typeID)
        if let recent = recentBuckets[slot], recent._withUnsafeGuaranteedRef({ $0.typeID }) == typeID { return recent }
        return cachedBucket(for: typeID, at: slot)
    }

    /// `unmanagedBucket(for:)` when the cache missed: looks the bucket up and caches it. Not
    /// inlined: the callers' common case, a hit, stays short.
    @inline(never)
    // Unmanaged: `buckets` holds it.
    private mutating func cachedBucket(for typeID: ObjectIdentifier, at slot: Int) -> Unmanaged<Bucket>? {
        guard let bucket = buckets[typeID] else { return nil }
        recentBuckets[slot] = Unmanaged.passUnretained(bucket)
        return recentBuckets[slot]
    }

    @inline(__always)
    private static func slot(of typeID: ObjectIdentifier) -> Int {
        TypeIDCache.slot(of: typeID, count: recentBucketsCount)
    }

    /// The bucket of `E`, made (with `E`'s hooks and supertypes, if it has any) if there is none.
    mutating func bucket<E: Sendable>(for _: E.Type, on bus: EventBus?) -> Bucket {
        unmanagedBucket(for: E.self, on: bus).takeUnretainedValue()
    }

    /// ``bucket(for:on:)``, unretained: valid under the lock until the registry changes.
    // Unmanaged: `buckets` holds it.
    mutating func unmanagedBucket<E: Sendable>(for _: E.Type, on bus: EventBus?) -> Unmanaged<Bucket> {
        let typeID = ObjectIdentifier(E.self)
        if let bucket = unmanagedBucket(for: typeID) { return bucket }
        return makeBucket(for: E.self, on: bus)
    }

    @inline(never)
    // Unmanaged: as `unmanagedBucket(for:on:)`.
    private mutating func makeBucket<E: Sendable>(for _: E.Type, on bus: EventBus?) -> Unmanaged<Bucket> {
        let typeID = ObjectIdentifier(E.self)
        let hooks = (E.self as? any HookedEvent.Type).map { makeHooks($0, for: bus) }
        let supertypes = (E.self as? any DeliveredAsSupertypes.Type).map { makeFanOut($0) }
        let bucket = Bucket(typeID: typeID, hooks: hooks, supertypes: supertypes)
        buckets[typeID] = bucket
        recentBuckets[Self.slot(of: typeID)] = Unmanaged.passUnretained(bucket)
        summarize(typeID, added: true)
        return Unmanaged.passUnretained(bucket)
    }

    /// The bit of `typeID` in the snapshot's `typeSummary`.
    @inline(__always)
    static func summaryBit(of typeID: ObjectIdentifier) -> Int {
        // Fibonacci hashing: the top bits of the product depend on every bit of the address.
        let bits = UInt64(UInt(bitPattern: typeID)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: bits >> 58)
    }

    /// Counts a bucket of `typeID` made or removed, and publishes the summary when a bit changes.
    private mutating func summarize(_ typeID: ObjectIdentifier, added: Bool) {
        let bit = Self.summaryBit(of: typeID)
        let before = summaryCounts[bit]
        summaryCounts[bit] = added ? before + 1 : before - 1
        if before == (added ? 0 : 1) {
            summaryMask ^= 1 << bit
            publishSummary()
        }
    }

    private func publishSummary() {
        snapshot.typeSummary.store(reports != 0 ? ~0 : summaryMask)
    }

    /// Whether `E`, which has no bucket, needs one to be dispatched: it has hooks or supertypes (two
    /// conformance checks, cached in `unhookedTypes` for the types that have neither).
    @inline(__always)
    func needsBucket<E: Sendable>(_: E.Type) -> Bool {
        if snapshot.unhookedTypes.contains(ObjectIdentifier(E.self)) { return false }
        return Self.checkNeedsBucket(E.self, caching: snapshot.unhookedTypes)
    }

    /// `needsBucket`, when the type is not in the cache `unhookedTypes`. Static: an instance method
    /// not inlined would have its caller copy the registry into its frame, the dispatch's, which is on
    /// the stack while handlers run ("Guarantees": the stack per nested dispatch).
    @inline(never)
    private static func checkNeedsBucket<E: Sendable>(_: E.Type, caching unhookedTypes: TypeIDCache) -> Bool {
        guard E.self is any HookedEvent.Type || E.self is any DeliveredAsSupertypes.Type else {
            unhookedTypes.insert(ObjectIdentifier(E.self))
            return false
        }
        return true
    }

    /// Whether a dispatch of key `key` to `bucket`'s type is received: a live subscription of the
    /// key (or of none) of that type, or of one of its supertypes `supertypeIDs`, at any level.
    func receives(_ key: String?, in bucket: Bucket, orIn supertypeIDs: [ObjectIdentifier]) -> Bool {
        bucket.hasLiveSubscription(forKey: key)
            || supertypeIDs.contains { buckets[$0]?.hasLiveSubscription(forKey: key) ?? false }
    }

    /// The number of buckets (for tests of bucket removal).
    var bucketCount: Int { buckets.count }

    /// The number of items in the expiry queue (for tests of its bound).
    var expiryCount: Int { expiries.count }

    /// The slot table's allocated pages (for tests of their release).
    var slotPageCount: Int { slots.pageCount }

    /// Queues `bucket` for removal if it just became empty.
    private mutating func noteMaybeEmpty(_ bucket: Bucket) {
        guard bucket.isRemovable, bucket.emptySince == nil else { return }
        bucket.emptySince = operations
        emptyBuckets.append(bucket)
    }

    /// Removes at most one bucket that has stayed empty for the grace period. O(1).
    ///
    /// A queued bucket leaves the queue only once its grace period is over (the queue is in
    /// `emptySince` order), removed if it is empty then: a type subscribed to and disposed of in
    /// turn is queued once per grace period, not once per dispose.
    private mutating func removeOneEmptyBucket() {
        guard emptyBucketsHead < emptyBuckets.count else { return }
        let bucket = emptyBuckets[emptyBucketsHead]
        if let since = bucket.emptySince, operations &- since < Self.emptyBucketGrace { return }
        if bucket.isRemovable {
            buckets[bucket.typeID] = nil
            summarize(bucket.typeID, added: false)
            let slot = Self.slot(of: bucket.typeID)
            if recentBuckets[slot]?.toOpaque() == Unmanaged.passUnretained(bucket).toOpaque() {
                recentBuckets[slot] = nil
            }
            afterUnlock.release(bucket)
        }
        bucket.emptySince = nil
        emptyBucketsHead += 1
        if emptyBucketsHead == emptyBuckets.count {
            emptyBuckets.removeAll(keepingCapacity: true)
            emptyBucketsHead = 0
        } else if emptyBucketsHead >= 1024 && emptyBucketsHead * 2 >= emptyBuckets.count {
            emptyBuckets.removeFirst(emptyBucketsHead)  // amortised O(1): at most once per `head` pops
            emptyBucketsHead = 0
        }
    }

    // MARK: Operations

    /// Counts `times` bus operations of one kind (more than one: dispatches that skipped the lock,
    /// see ``BusCore``), the sweep step every operation starts with: pays their share of
    /// background work (one empty bucket and ``expiriesPerOperation`` expired sticky events at
    /// most) and picks the owned nodes their share of the sweep checks (after unlocking: see
    /// ``AfterUnlock``).
    @inline(__always)
    mutating func tick(_ work: Work, times: Int = 1) {
        operations &+= UInt64(times)
        if emptyBucketsHead < emptyBuckets.count { removeOneEmptyBucket() }
        // A queued item is a kept event's, so counted: no sticky event, no look at the queue (a
        // load fewer for every operation of a bus without any).
        if stickyCount != 0 { expireStickyStep() }
        if ownedCount > 0 { pickForSweep(work, times: times) }
    }

    /// `tick`'s share of the sticky expiries, when there are sticky events. Not inlined: reading
    /// the queue (whose accesses are checked for exclusivity) would reserve a record in the frame of
    /// every operation, the dispatch's among them.
    @inline(never)
    private mutating func expireStickyStep() {
        if !expiries.isEmpty { expireSticky(limit: Self.expiriesPerOperation) }
    }

    /// `tick`'s share of the sweep checks, when there are owned nodes. Not inlined: an operation on
    /// a bus without any stays short.
    @inline(never)
    private mutating func pickForSweep(_ work: Work, times: Int) {
        sweepCredit += work.rawValue * times
        // A ring of one node is not picked twice by one operation.
        var picks = 0
        while sweepCredit >= 8 && !afterUnlock.isSweepFull && picks < ownedCount {
            sweepCredit -= 8
            picks += 1
            guard let node = advanceSweepCursor() else { break }
            afterUnlock.pick(node, skippedMainBound: &mainBoundSkipped)
        }
        if sweepCredit >= 8 { sweepCredit = 0 }  // the carrier holds what one operation may check
        if mainBoundSkipped >= ownedCount, mainSweepDue() { afterUnlock.mainSweepDue = true }
    }

    /// The node at the sweep cursor, moving the cursor on.
    private mutating func advanceSweepCursor() -> SubscriptionNode? {
        guard let node = sweepCursor else { return nil }
        sweepCursor = node.nextOwned
        return node
    }

    /// A purge step: picks up to `limit` owned nodes from the sweep cursor on for an owner check
    /// (into ``afterUnlock``: reserve room for them before locking); main-bound ones are skipped
    /// unless `onMain`. O(limit).
    mutating func pickForPurge(limit: Int, onMain: Bool) {
        for _ in 0..<Swift.min(limit, ownedCount) {
            guard let node = advanceSweepCursor() else { return }
            if node.ownerBelongsToMain && !onMain {
                mainBoundSkipped += 1
            } else {
                afterUnlock.check(node)
            }
        }
    }

    /// Whether the sweep skipped as many main-bound nodes as a full turn holds, so that a pass on
    /// the main queue is due (and not already scheduled); resets the count if so.
    mutating func mainSweepDue(force: Bool = false) -> Bool {
        guard !mainSweepScheduled, mainBoundSkipped > 0, force || mainBoundSkipped >= ownedCount else { return false }
        mainBoundSkipped = 0
        mainSweepScheduled = true
        return true
    }

    /// Subscribe: registers the subscription whose primary node is `primary` (built, with its
    /// siblings, before the lock was taken: see `BusCore.subscribe`), giving its nodes their id,
    /// slot and bucket and linking each in the list of its key. Returns its handle, or `nil` if the
    /// event type's hooks refused it. Hooks may admit only some of the keys: the nodes of the
    /// others are let go of unregistered, and the first admitted node is the primary. The tracer's
    /// record, if one is set, goes to ``afterUnlock``.
    mutating func subscribe<E: Sendable>(
        _ primary: SubscriptionNode, of _: E.Type, traits: SubscriptionTraits, bus: EventBus?
    ) -> SubscriptionHandle? {
        guard let node = link(primary, of: E.self, traits: traits, bus: bus) else { return nil }
        // Unmanaged: see `link`.
        return node._withUnsafeGuaranteedRef { node in
            if hasTracer { afterUnlock.trace(node, ended: nil) }
            return node.handle
        }
    }

    /// Subscribe with a replay: ``subscribe(_:of:traits:bus:)``, then the kept sticky events of
    /// `E` of the subscription's keys (all of them if it has none), in dispatch order; the
    /// `.untilDelivered` ones are held for it (see `StickyStore`) until the caller settles them
    /// (``settleHeld(_:key:sequence:received:)``, ``endHolding(_:received:enqueued:)``). `nil` if
    /// the hooks refused it. O(keys + events returned).
    mutating func subscribeReplaying<E: Sendable>(
        _ primary: SubscriptionNode, of _: E.Type, traits: SubscriptionTraits, bus: EventBus?
    ) -> (node: SubscriptionNode, replay: [StickyStore.Entry])? {
        // Unmanaged: see `link`.
        guard let node = link(primary, of: E.self, traits: traits, bus: bus)?.takeUnretainedValue() else { return nil }
        if hasTracer { afterUnlock.trace(node, ended: nil) }
        let keys = node.keys
        let replay = withStore(of: E.self) { store, now, after in
            store.entries(of: keys.isEmpty ? nil : keys, now: now, taking: true, after: &after)
        }
        return (node, replay ?? [])
    }

    // Unmanaged: the primary returned is linked, so its list holds it while the lock is held.
    private mutating func link<E: Sendable>(
        _ primary: SubscriptionNode, of _: E.Type, traits: SubscriptionTraits, bus: EventBus?
    ) -> Unmanaged<SubscriptionNode>? {
        // Unmanaged: the registry holds its buckets, and the lock is held.
        unmanagedBucket(for: E.self, on: bus)._withUnsafeGuaranteedRef { bucket in
            link(primary, in: bucket, traits: traits)
        }
    }

    // Unmanaged: as above.
    private mutating func link(
        _ primary: SubscriptionNode, in bucket: Bucket, traits: SubscriptionTraits
    ) -> Unmanaged<SubscriptionNode>? {
        var primary = primary
        if let hooks = bucket.hooks {
            guard let admitted = Self.admit(primary, by: hooks, after: &afterUnlock) else { return nil }
            primary = admitted
        }
        let id = eventbus_next_subscription_id()
        lastID = id
        let slot = slots.reserve()
        link(primary, id: id, slot: slot, in: bucket)
        for sibling in primary.siblings { link(sibling, id: id, slot: slot, in: bucket) }
        bucket.subscriptionCount += 1
        subscriptionCount += 1
        if traits.isInternal {
            bucket.internalCount += 1
            internalCount += 1
        }
        slots.set(primary, at: slot)
        if traits.isOwned { insertOwned(primary) }
        if let hooks = bucket.hooks {
            if let key = primary.key { hooks.subscribed(key: key, after: &afterUnlock) }
            for sibling in primary.siblings { hooks.subscribed(key: sibling.key!, after: &afterUnlock) }
        }
        // Unmanaged: linked above, so its list holds it.
        return Unmanaged.passUnretained(primary)
    }

    @inline(__always)
    private mutating func link(_ node: SubscriptionNode, id: UInt64, slot: UInt32, in bucket: Bucket) {
        node.id = id
        node.slot = slot
        // Unmanaged: the registry holds the bucket, and keeps it while a node is linked in it.
        node.bucket = Unmanaged.passUnretained(bucket)
        bucket.append(node, after: &afterUnlock)
    }

    /// Asks `hooks` which keys of the subscription of `primary` they admit: `nil` if none, else the
    /// primary of the admitted keys' nodes (the others are let go of unregistered).
    private static func admit(
        _ primary: SubscriptionNode, by hooks: any EventTypeHooks, after: inout AfterUnlock
    ) -> SubscriptionNode? {
        let nodes: [SubscriptionNode] = [primary] + primary.siblings
        guard let admitted = hooks.admit(keys: nodes.compactMap(\.key), after: &after) else { return nil }
        guard admitted.count < nodes.count else { return primary }
        let admittedKeys = Set(admitted)
        var kept: [SubscriptionNode] = []
        for node in nodes {
            if node.key.map(admittedKeys.contains) ?? false { kept.append(node) } else { after.release(node) }
        }
        guard let newPrimary = kept.first else { return nil }
        primary.siblings = []
        newPrimary.siblings = Array(kept.dropFirst())
        return newPrimary
    }

    private mutating func insertOwned(_ node: SubscriptionNode) {
        node.isInOwnedRing = true
        ownedCount += 1
        guard let cursor = sweepCursor else {
            node.nextOwned = node
            node.previousOwned = node
            sweepCursor = node
            return
        }
        // Just before the cursor: checked last in the current turn.
        let last = cursor.previousOwned!
        node.previousOwned = last
        node.nextOwned = cursor
        last.nextOwned = node
        cursor.previousOwned = node
    }

    private mutating func removeOwned(_ node: SubscriptionNode) {
        guard node.isInOwnedRing else { return }
        node.isInOwnedRing = false
        ownedCount -= 1
        if ownedCount == 0 {
            sweepCursor = nil
        } else {
            node.previousOwned!.nextOwned = node.nextOwned
            node.nextOwned!.previousOwned = node.previousOwned
            if sweepCursor === node { sweepCursor = node.nextOwned }
        }
        node.nextOwned = nil
        node.previousOwned = nil
    }

    /// The primary node of a live subscription.
    func primary(of subscription: SubscriptionHandle) -> SubscriptionNode? {
        unmanagedPrimary(of: subscription)?.takeUnretainedValue()  // Unmanaged: see there
    }

    /// ``primary(of:)``, unretained.
    // Unmanaged: a slot's node is linked (its list holds it), and the lock is held.
    private func unmanagedPrimary(of subscription: SubscriptionHandle) -> Unmanaged<SubscriptionNode>? {
        guard let node = slots.unmanagedNode(at: subscription.slot),
            node._withUnsafeGuaranteedRef({ $0.id == subscription.id })
        else { return nil }
        return node
    }

    /// Whether the subscription is live.
    func isLive(_ subscription: SubscriptionHandle) -> Bool { primary(of: subscription) != nil }

    /// Records `bag` as the bag of the subscription; `false` if it has ended.
    mutating func attach(_ subscription: SubscriptionHandle, to bag: BagTokens) -> Bool {
        guard let primary = primary(of: subscription) else { return false }
        primary.bag = bag
        return true
    }

    /// End: ends a subscription (its primary node and siblings) and unlinks it; `false` if it had
    /// already ended. What it lets go of (its nodes, its bag to tell, the tracer's record of
    /// `reason`) goes to ``afterUnlock``. O(keys). A node that a dispatch in progress holds stays
    /// in its list, ended, until that dispatch lets go of it (`unpin`).
    @discardableResult
    mutating func end(_ subscription: SubscriptionHandle, reason: TraceRecord.Ended.Reason) -> Bool {
        // Unmanaged: see `unmanagedPrimary(of:)`.
        guard let primary = unmanagedPrimary(of: subscription) else { return false }
        slots.free(subscription.slot)
        // Unmanaged: the slot's node is linked (its list holds it) until unlinked here, and then
        // `afterUnlock` holds it.
        primary._withUnsafeGuaranteedRef { primary in
            // Unmanaged: a bucket with a linked node is not removed.
            primary.bucket!._withUnsafeGuaranteedRef { bucket in end(primary, in: bucket) }
            if hasTracer { afterUnlock.trace(primary, ended: reason) }
        }
        return true
    }

    private mutating func end(_ primary: SubscriptionNode, in bucket: Bucket) {
        subscriptionCount -= 1
        if primary.isInternal {
            internalCount -= 1
            bucket.internalCount -= 1
        }
        _ = primary.end()
        for sibling in primary.siblings { _ = sibling.end() }
        if let bag = primary.bag {
            afterUnlock.tell(bag, forget: primary.id)
            primary.bag = nil
        }
        removeOwned(primary)
        unlinkNode(primary, from: bucket)
        for sibling in primary.siblings { unlinkNode(sibling, from: bucket) }
        bucket.subscriptionCount -= 1
    }

    /// Records a handler error for `EventBusTesting` (the last few, and a count); returns the one
    /// it lets go of to make room, for the caller to release after unlocking (the error a handler
    /// threw is a user value: its deinit must not run under the lock).
    mutating func noteHandlerError(_ error: HandlerError) -> HandlerError? {
        handlerErrorCount += 1
        var evicted: HandlerError?
        if recentHandlerErrors.count == Self.recentHandlerErrorsLimit { evicted = recentHandlerErrors.removeFirst() }
        recentHandlerErrors.append(error)
        return evicted
    }

    /// The live subscriptions' primaries in slots `start..<start + limit` (of `typeID` only, if
    /// given); and the slot to go on from, `nil` at the end. O(limit).
    func primaries(
        from start: UInt32, limit: UInt32, ofTypeID typeID: ObjectIdentifier?, into found: inout [SubscriptionNode]
    ) -> UInt32? {
        let end = Swift.min(slots.count, start &+ limit)
        var slot = start
        while slot < end {
            if let node = slots.node(at: slot), node.isLive,
                // Unmanaged: a live node's bucket is held by the registry.
                typeID == nil || node.bucket!.takeUnretainedValue().typeID == typeID
            {
                found.append(node)
            }
            slot += 1
        }
        return end < slots.count ? end : nil
    }

    @inline(never)
    private mutating func unlinkNode(_ node: SubscriptionNode, from bucket: Bucket) {
        guard node.isLinked else { return }
        if node.pins > 0 {
            node.unlinkWhenUnpinned = true
            return
        }
        if bucket.remove(node, after: &afterUnlock), let key = node.key {
            bucket.hooks?.keyEnded(key, after: &afterUnlock)
        }
        noteMaybeEmpty(bucket)
    }

    /// A dispatch holds `node` (to deliver to it, or to resume its walk there): it stays linked,
    /// and so alive, until `unpin`.
    @inline(__always)
    // Unmanaged: called under the lock, on a node its list keeps alive.
    func pin(_ node: Unmanaged<SubscriptionNode>) {
        node._withUnsafeGuaranteedRef { $0.pins &+= 1 }
    }

    /// Turns a pin of a live `node`, just taken in the same critical section, into a retain (a
    /// live node is never marked to be unlinked when unpinned: only an ended one is).
    @inline(__always)
    // Unmanaged: as `pin`; the caller releases the node later.
    func dropPin(retaining node: Unmanaged<SubscriptionNode>) {
        node._withUnsafeGuaranteedRef { $0.pins &-= 1 }
        _ = node.retain()
    }

    /// A dispatch let go of `node`; if it ended meanwhile and nothing else pins it, unlink it now.
    @inline(__always)
    // Unmanaged: a pinned node is linked, so its list keeps it alive until this unlinks it.
    mutating func unpin(_ node: Unmanaged<SubscriptionNode>, in bucket: Bucket) {
        let unlinkNow = node._withUnsafeGuaranteedRef { node in
            node.pins &-= 1
            guard node.pins == 0, node.unlinkWhenUnpinned else { return false }
            node.unlinkWhenUnpinned = false
            return true
        }
        if unlinkNow { unlinkNode(node.takeUnretainedValue(), from: bucket) }
    }

    /// Ends every subscription and empties the registry (the bus is being deallocated). O(N); no
    /// subscribe or dispatch can reach the registry any more, only tokens (which then find nothing)
    /// and deliveries already enqueued (which find their subscription ended). It lets go of the
    /// bus's tracer and handlers too; the tracer gets the record of each end (``afterUnlock``).
    mutating func removeAll() {
        var seen = Set<UInt64>()
        let tracer = tracer
        for bucket in buckets.values {
            bucket.drain(into: &afterUnlock) { node, after in
                if let tracer, seen.insert(node.id).inserted { after.trace(node, ended: .busGone, to: tracer) }
                _ = node.end()
                if let bag = node.bag {
                    after.tell(bag, forget: node.id)
                    node.bag = nil
                }
                node.nextOwned = nil
                node.previousOwned = nil
            }
            afterUnlock.release(bucket)  // with its sticky events
        }
        // Closures: released after unlocking, boxed (O(1) here: the bus is being deallocated).
        afterUnlock.release(ReleasedLater((self.tracer, deadEventHandler, handlerErrorHandler, contextPropagator)))
        self.tracer = nil
        contextPropagator = nil
        deadEventHandler = nil
        handlerErrorHandler = nil
        buckets = [:]
        emptyBuckets = []
        emptyBucketsHead = 0
        summaryCounts = ContiguousArray(repeating: 0, count: 64)
        summaryMask = 0
        publishSummary()
        recentBuckets = ContiguousArray(repeating: nil, count: Self.recentBucketsCount)
        slots = SlotTable()
        subscriptionCount = 0
        internalCount = 0
        sweepCursor = nil
        ownedCount = 0
        expiries.removeAll()
        stickyCount = 0
    }

    // MARK: Sticky events

    /// The sticky events of `E`, if it has a bucket with any.
    func stickyStore<E: Sendable>(of _: E.Type) -> StickyStore? {
        buckets[ObjectIdentifier(E.self)]?.sticky
    }

    /// Keeps the event at `event` (of `bucket`'s type, key `key`) as `keeping.policy` says; the
    /// events it replaces are released after unlocking. `keeping.mayBeReceived`: whether the
    /// dispatch found a live subscriber; an `.untilDelivered` event is then held until the dispatch, once delivered,
    /// settles it (``endHolding(_:received:enqueued:)``), and its sequence is
    /// returned (0 otherwise). Not inlined: the plain dispatch path stays short.
    @inline(never)
    mutating func storeSticky<E: Sendable>(
        _ event: UnsafePointer<E>, key: String?, _ keeping: (policy: StickyPolicy, mayBeReceived: Bool),
        in bucket: Bucket
    ) -> UInt64 {
        storeSticky(event.pointee, key: key, keeping, in: bucket)
    }

    /// ``storeSticky(_:key:_:in:)`` for the event boxed: the rest is not generic (unspecialized
    /// generic code would look its types' metadata up at every step, which cost more than the
    /// rest of a sticky dispatch).
    private mutating func storeSticky(
        _ event: any Sendable, key: String?, _ keeping: (policy: StickyPolicy, mayBeReceived: Bool),
        in bucket: Bucket
    ) -> UInt64 {
        let (policy, mayBeReceived) = keeping
        let store: StickyStore
        if let sticky = bucket.sticky {
            store = sticky
        } else {
            store = StickyStore(of: bucket.typeID, expiries: expiries)
            bucket.sticky = store
        }
        stickySequence += 1
        // Only a TTL needs the time.
        let now: UInt64
        if case .latestWithTTL = policy.kind { now = clock.now } else { now = 0 }
        let before = store.count
        let replaced = store.store(event, key: key, keeping, stamp: (sequence: stickySequence, now: now))
        stickyCount += store.count - before
        if let replaced { afterUnlock.release(replaced) }
        guard case .untilDelivered = policy.kind, mayBeReceived else { return 0 }
        return stickySequence
    }

    /// Settles the held `.untilDelivered` event `sequence` of the type `typeID` and `key`: let go of
    /// (released after unlocking) if a handler ran for it (`received`), kept for the next taker
    /// otherwise; nothing if a later sticky dispatch or a removal let go of it first. See
    /// `StickyStore`. O(k), k the events kept for the key (one, unless `.last(n)` came after it).
    mutating func settleHeld(
        _ typeID: ObjectIdentifier, key: String?, sequence: UInt64, received: Bool
    ) {
        guard let bucket = buckets[typeID], let sticky = bucket.sticky else { return }
        let before = sticky.count
        if let removed = sticky.settle(key: key, sequence: sequence, received: received) {
            afterUnlock.release(removed)
        }
        stickyCount += sticky.count - before
        noteMaybeEmpty(bucket)
    }

    /// Ends `hold` for its holder (a dispatch or a replay), once it has delivered the event:
    /// `received`, whether a handler ran for it then; `enqueued`, how many deliveries it enqueued
    /// with the hold, which finish it later (``finishHolding(_:received:)``). The event is
    /// let go of if it was received, kept if it was not and no enqueued delivery is left.
    mutating func endHolding(_ hold: StickyHold, received: Bool, enqueued: Int) {
        hold.pending += enqueued - StickyHold.unended
        settle(hold, received: received)
    }

    /// Finishes one delivery enqueued with `hold`, once it has run (`received`: its handler ran) or
    /// found its subscription ended or its owner gone.
    mutating func finishHolding(_ hold: StickyHold, received: Bool) {
        hold.pending -= 1
        settle(hold, received: received)
    }

    private mutating func settle(_ hold: StickyHold, received: Bool) {
        guard received || hold.pending == 0 else { return }
        settleHeld(hold.typeID, key: hold.key, sequence: hold.sequence, received: received)
    }

    /// Read: the latest kept event of `E` and `key` that is live and not held, if any. O(1).
    mutating func latestSticky<E: Sendable>(of _: E.Type, key: String?) -> E? {
        withStore(of: E.self) { store, now, after in store.latest(of: key, now: now, after: &after)?.event(as: E.self) }
            ?? nil
    }

    /// Read: the kept events of `E` and `key` that are live and not held, oldest first. O(events).
    mutating func stickyEvents<E: Sendable>(of _: E.Type, key: String?) -> [E] {
        withStore(of: E.self) { store, now, after in
            store.entries(of: key, now: now, after: &after).map { $0.event(as: E.self) }
        }
            ?? []
    }

    /// Take: removes and returns the latest kept event of `E` and `key` that is live and not held.
    /// O(1).
    mutating func takeSticky<E: Sendable>(of _: E.Type, key: String?) -> E? {
        withStore(of: E.self) { store, now, after in
            store.takeLatest(of: key, now: now, after: &after)?.event(as: E.self)
        } ?? nil
    }

    /// Remove: lets go of every kept event of `E` and `key`, held ones included; returns how many
    /// of them were live and not held. O(1).
    mutating func removeSticky<E: Sendable>(of _: E.Type, key: String?) -> Int {
        withStore(of: E.self) { store, now, after in store.remove(key, now: now, after: &after) } ?? 0
    }

    /// The sticky operations' common part: after the sweep step's share of expiries (the
    /// operation checks the deadlines of what it reads), runs `body` on `E`'s store (if any), the
    /// time and ``afterUnlock``, then accounts for what it removed and queues the bucket for
    /// removal if it is now empty.
    private mutating func withStore<E: Sendable, R>(
        of _: E.Type, _ body: (StickyStore, UInt64, inout AfterUnlock) -> R
    ) -> R? {
        expireSticky(limit: Self.expiriesPerOperation)
        guard let bucket = buckets[ObjectIdentifier(E.self)], let store = stickyStore(of: E.self) else { return nil }
        let before = store.count
        let result = body(store, clock.now, &afterUnlock)
        stickyCount += store.count - before
        noteMaybeEmpty(bucket)
        return result
    }

    /// Removes every sticky event of the bus (released after unlocking).
    mutating func removeAllSticky() {
        for bucket in buckets.values {
            guard let sticky = bucket.sticky else { continue }
            if let removed = sticky.removeAll() { afterUnlock.release(removed) }
            bucket.sticky = nil
            noteMaybeEmpty(bucket)
        }
        expiries.removeAll()
        stickyCount = 0
    }

    /// Takes up to `limit` steps of letting go of the sticky events whose TTL has passed: each
    /// lets go of one, or moves the queue item of one whose deadline a later dispatch postponed.
    /// O(log n) a step, n being the slots with a TTL event. Returns whether no item is due any
    /// more (it stopped before `limit`).
    @discardableResult
    mutating func expireSticky(limit: Int) -> Bool {
        let now = clock.now
        for _ in 0..<limit {
            let item: ExpiryQueue.Item
            switch expiries.popDue(now: now) {
            case .none: return true
            case .postponed: continue
            case .expired(let expired): item = expired
            }
            guard let bucket = buckets[item.typeID], let sticky = bucket.sticky else { continue }
            let before = sticky.count
            if let removed = sticky.expire(item, now: now) { afterUnlock.release(removed) }
            stickyCount += sticky.count - before
            noteMaybeEmpty(bucket)
        }
        return false
    }
}

/// Makes the hooks of a hooked event type (an opened existential).
private func makeHooks<H: HookedEvent>(_: H.Type, for bus: EventBus?) -> any EventTypeHooks {
    // Every operation of a bus passes it; only the registry's own tests pass none, with no hooks.
    guard let bus else { preconditionFailure("EventBus: the hooks of \(H.self) need the bus they belong to") }
    return H.makeHooks(for: bus)
}

/// Makes the supertype fan-out of an event type with supertypes (an opened existential).
private func makeFanOut<E: DeliveredAsSupertypes>(_: E.Type) -> any SupertypeDelivering {
    SupertypeFanOut<E>()
}
