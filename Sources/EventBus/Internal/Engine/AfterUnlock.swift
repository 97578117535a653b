/// Everything a registry operation leaves to do once the bus's lock is let go of: the one carrier
/// of the core. Objects to release (so that no `deinit` runs under the lock), bags to tell, work
/// the hooks asked for, the owned subscriptions the sweep or a purge picked (loading an owner
/// retains it, and its release may run its `deinit`, so they are checked only after unlocking), a
/// sweep pass to schedule on the main queue, and records for the tracer.
///
/// The registry fills its own (``Registry/afterUnlock``); the executor (`BusCore.withRegistry`)
/// takes it out before unlocking and interprets it after (`BusCore.perform(_:)`): effects as
/// values, which the registry's tests read without a bus (`releaseCount`, `bagCount`, `traced`,
/// `pickedIDs`). The common cases cost two loads and no
/// allocation: nothing to do, or one object to release (a dispose's node). The sweep's picks have
/// two inline slots of their own, since every operation on a bus with owned subscriptions picks.
///
/// A value, taken out of the registry once (``Registry/takeAfterUnlock()``) into a variable, and
/// interpreted once there: the interpreter moves what it holds out of it (so the last releases
/// happen inside ``ReleaseLoop``, never when a copy is dropped), and its picks are references it
/// owns.
package struct AfterUnlock {
    /// What an operation leaves beyond its first object and its sweep's picks: rarer, kept together.
    enum Entry {
        /// An object to release.
        case object(AnyObject)
        /// A bag whose token's subscription ended, with that subscription's id.
        case bag(BagTokens, UInt64)
        /// Work decided on under the lock (installing an observer, reporting a refusal).
        case work(() -> Void)
        /// An owned subscription to check for a dead owner (a purge's).
        case check(SubscriptionNode)
        /// A subscription registered (`reason` nil) or ended, for the bus's tracer (read again
        /// for each record, so a tracer removed by an earlier record's call gets no more), or for
        /// the one given (the bus's last, at its deinit).
        case trace(SubscriptionNode, TraceRecord.Ended.Reason?, (@Sendable (TraceRecord) -> Void)?)
    }

    private var first: AnyObject?
    private var more: [Entry]?
    // Unmanaged: each is retained by `pick` and released by `perform` (a batch that picked nothing,
    // the commonest case, then costs no reference counting at all).
    private var firstPick: Unmanaged<SubscriptionNode>?
    private var secondPick: Unmanaged<SubscriptionNode>?  // Unmanaged: as `firstPick`
    /// Set when the sweep skipped a full turn's worth of main-bound owners off the main queue: a
    /// pass there is scheduled.
    var mainSweepDue = false

    init() {}

    /// Room for `count` objects, allocated now (made before taking the lock: an allocation under
    /// the lock would make every thread waiting for it wait for the allocator too).
    init(capacity count: Int) {
        guard count > 1 else { return }
        more = []
        more!.reserveCapacity(count - 1)
    }

    /// Moves what it holds into a new carrier, leaving this one empty (no reference counting).
    @inline(__always)
    mutating func take() -> AfterUnlock {
        var taken = AfterUnlock()
        taken.first = first.take()
        taken.more = more.take()
        taken.firstPick = firstPick.take()
        taken.secondPick = secondPick.take()
        swap(&taken.mainSweepDue, &mainSweepDue)
        return taken
    }

    // MARK: Filled under the lock

    // Unmanaged: `reference` is owned (+1) by the caller, and released here by `perform`.
    mutating func adopt(_ reference: Unmanaged<SubscriptionNode>) {
        release(reference.takeRetainedValue())
    }

    /// Releases `object` after unlocking.
    package mutating func release(_ object: consuming AnyObject) {
        if first == nil { first = object } else { append(.object(object)) }
    }

    /// Tells `bag` that the subscription `id` ended.
    mutating func tell(_ bag: BagTokens, forget id: UInt64) {
        append(.bag(bag, id))
    }

    /// Runs `body` after unlocking (before the objects are released).
    package mutating func run(_ body: @escaping () -> Void) {
        append(.work(body))
    }

    /// Hands the bus's tracer (`tracer`, if given: the bus's last) the record of `node`'s
    /// registration (`reason` nil) or end.
    mutating func trace(
        _ node: SubscriptionNode, ended reason: TraceRecord.Ended.Reason?,
        to tracer: (@Sendable (TraceRecord) -> Void)? = nil
    ) {
        append(.trace(node, reason, tracer))
    }

    /// Checks `node`'s owner after unlocking (a purge picks many: reserve room for them).
    mutating func check(_ node: SubscriptionNode) {
        append(.check(node))
    }

    /// Whether the sweep's two slots are taken.
    var isSweepFull: Bool { secondPick != nil }

    /// Picks `node` for an owner check, unless its owner may only be released on the main queue
    /// and this is not it (then counts it in `skippedMainBound`).
    @inline(__always)
    mutating func pick(_ node: SubscriptionNode, skippedMainBound: inout Int) {
        if node.ownerBelongsToMain && !isOnMainQueue {
            skippedMainBound += 1
            return
        }
        // Unmanaged: retained here, released by `perform`.
        if firstPick == nil { firstPick = .passRetained(node) } else { secondPick = .passRetained(node) }
    }

    private mutating func append(_ entry: consuming Entry) {
        if more == nil { more = [entry] } else { more!.append(entry) }
    }

    // MARK: What tests read

    /// The objects to release.
    var releaseCount: Int {
        (first == nil ? 0 : 1) + (more?.count { if case .object = $0 { true } else { false } } ?? 0)
    }
    /// The bags to tell.
    var bagCount: Int { more?.count { if case .bag = $0 { true } else { false } } ?? 0 }
    /// The ids of the subscriptions to trace, with their end's reason (nil: registered).
    var traced: [(id: UInt64, ended: TraceRecord.Ended.Reason?)] {
        more?.compactMap { if case .trace(let node, let reason, _) = $0 { (node.id, reason) } else { nil } } ?? []
    }
    /// The ids of the subscriptions the sweep or a purge picked for an owner check.
    var pickedIDs: [UInt64] {
        // Unmanaged: retained by `pick`.
        [firstPick, secondPick].compactMap { $0?._withUnsafeGuaranteedRef(\.id) }
            + (more?.compactMap { if case .check(let node) = $0 { node.id } else { nil } } ?? [])
    }

    // MARK: Handed to the interpreter (`BusCore.interpret(_:)`), after unlocking

    /// Hands what it holds to `core`'s interpreter, with no lock held. The common cases, nothing or
    /// one object to release, cost three loads and no call: the object goes to ``ReleaseLoop`` here.
    @inline(__always)
    mutating func hand(to core: BusCore) {
        guard more == nil && firstPick == nil && !mainSweepDue else {
            Self.handAll(
                (first.take(), more.take()), picks: (firstPick.take(), secondPick.take()),
                mainSweepDue: mainSweepDue, to: core)
            return
        }
        if first != nil { ReleaseLoop.drop(first.take()) }
    }

    /// ``hand(to:)`` when there is more. Static, on the carrier's fields moved into it: taken apart
    /// (no argument of more than 4 words), they are passed in registers, where a whole carrier was
    /// passed by address, which kept one in the frame of every operation (a dispatch's is on the
    /// stack while handlers run).
    @inline(never)
    private static func handAll(
        _ objects: (first: AnyObject?, more: [Entry]?),
        // Unmanaged: the references `pick` took.
        picks: (first: Unmanaged<SubscriptionNode>?, second: Unmanaged<SubscriptionNode>?),
        mainSweepDue: Bool, to core: BusCore
    ) {
        var carrier = AfterUnlock()
        (carrier.first, carrier.more) = objects
        (carrier.firstPick, carrier.secondPick) = picks
        carrier.mainSweepDue = mainSweepDue
        core.interpret(&carrier)
    }

    /// The entries beyond the first object, in the order they came (an `Array`: every entry is
    /// copyable; a `~Copyable` value, such as a delivery receipt, is never left here).
    var entries: [Entry] { more ?? [] }

    /// The owned subscriptions the sweep picked for an owner check, taken out: the references
    /// `pick` took, now the caller's.
    mutating func takePicks() -> (first: SubscriptionNode?, second: SubscriptionNode?) {
        // Unmanaged: the references `pick` took, handed over once.
        (firstPick.take()?.takeRetainedValue(), secondPick.take()?.takeRetainedValue())
    }

    /// Every object it holds, taken out, for the caller to release last.
    mutating func takeObjects() -> (AnyObject?, [Entry]?) {
        (first.take(), more.take())
    }

    /// The record of `node`'s end, for the tracer.
    static func end(of node: SubscriptionNode, reason: TraceRecord.Ended.Reason) -> TraceRecord.Ended {
        TraceRecord.Ended(id: node.id, type: node.subscribedType, reason: reason, callSite: node.callSite.description)
    }
}
