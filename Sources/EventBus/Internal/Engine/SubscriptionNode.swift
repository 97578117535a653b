internal import _EventBusShims

/// The part of a subscription that a container manipulates without knowing its event type: the
/// liveness word, the owner, and the links of the lists it sits in.
///
/// A subscription to several keys (`ofType` chained) is one node per key: the first is the
/// *primary*, the others its *siblings*; they share the id, the body and the owner, and end together
/// (the container finds the primary by id). Nothing but the container's lists, and dispatches in
/// progress (enqueued deliveries included), holds a node strongly, and nothing holds it weakly (a
/// side table would put every retain on the runtime's slow path): tokens name a subscription by id.
/// A node holds its container strongly; the cycle this makes (container → lists → node →
/// container) is broken when the bus is deallocated and its container ends and unlinks every node
/// (`removeAll`). ``Subscription`` and ``PlainSubscription`` add the typed handler.
@usableFromInline
class SubscriptionNode: @unchecked Sendable {
    // @unchecked Sendable: `liveness` is only touched through the C atomics. A node is built before
    // the lock is taken and seen only by the registering thread until it is registered under the
    // lock of its container; from then on, the links, `pins`, `unlinkWhenUnpinned` and `bag` are
    // only touched under that lock, and `id`, `slot`, `bucket` and `siblings` (set
    // then) only read; everything else is immutable after init.

    // The stored properties are declared in the order they are laid out (Swift does not reorder
    // them): what a dispatch reads of every node first (liveness, id, links), then the
    // bookkeeping, then what only introspection reads; small fields are grouped so that none
    // leaves padding behind it (the sizes: Benchmarks/README.md, "Performance notes").

    /// 1 while the subscription is live, 0 once it has ended. It must stay the first stored
    /// property: its address is taken for the atomics (`livenessWord`), never read as a property.
    private var liveness: Int = 1

    /// Unique in the process (`EventToken` equality), from a counter; also orders a list. Set
    /// when the node is registered (`Registry.link`), 0 until then.
    @exclusivity(unchecked) final var id: UInt64 = 0

    // List links, under the bus's lock (which also makes the runtime's dynamic exclusivity
    // checks redundant: they would cost more than the linking).
    // Unmanaged: a list holds one reference to each node it links (`SubscriberList`), and reading
    // a link then costs no reference counting.
    @exclusivity(unchecked) final var next: Unmanaged<SubscriptionNode>?
    @exclusivity(unchecked) final var previous: Unmanaged<SubscriptionNode>?  // Unmanaged: as `next`

    /// The primary's place in its container's slot table (siblings share it). Set with `id`.
    @exclusivity(unchecked) final var slot: UInt32 = 0
    /// How many dispatches in progress hold this node in their chunk or resume their walk after
    /// it. A pinned node that ends stays in its list (ended, so never delivered to) until the last
    /// of them moves on. A dispatch pins a node at most twice, so the count is bounded by the
    /// dispatches running at once, far below `UInt32.max`. Final, as `unlinkWhenUnpinned`: a
    /// `@testable` build otherwise reaches them through the class's table, whose `modify`
    /// coroutines took 32 bytes of the dispatch's frame.
    @exclusivity(unchecked) final var pins: UInt32 = 0
    /// Where the node runs within a dispatch (priority; monitor or handler).
    let level: DeliveryLevel
    /// Whether the subscription was bound to an owner with `freeWith`.
    let isOwned: Bool
    /// Whether the subscription is the library's or an integration's own (`markedInternal()`).
    let isInternal: Bool
    /// Whether the owner may only be released on the main queue (main-actor and `atQueue(.main)`
    /// subscriptions): the sweep never loads it on another thread.
    let ownerBelongsToMain: Bool
    @exclusivity(unchecked) var isLinked = false
    @exclusivity(unchecked) final var unlinkWhenUnpinned = false
    @exclusivity(unchecked) var isInOwnedRing = false
    /// Whether a handler error was printed for this subscription (debug builds, no error handler):
    /// read and written only under the bus's lock.
    @exclusivity(unchecked) var printedError = false

    /// The bucket the node is filed in. Set with `id`; read only under the lock while `isLinked` (a
    /// bucket with a linked node is never removed).
    // Unmanaged: valid while linked, see above; read with no reference counting.
    @exclusivity(unchecked) final var bucket: Unmanaged<Bucket>?
    /// The key of the list this node sits in, `nil` for the unkeyed list.
    let key: String?
    /// Where the node is registered (held strongly: see the type's comment).
    let container: BusCore

    /// The other keys' nodes of the same subscription (empty for all but multi-key subscriptions):
    /// on the primary only, set before the node is registered (or while it is registered, under the
    /// lock: `Registry.link`), never written after.
    @exclusivity(unchecked) var siblings: [SubscriptionNode] = []

    // Links of the container's ring of owned primaries, which the incremental sweep walks. A node
    // is in the ring only while it is linked in its list, which owns it.
    @exclusivity(unchecked) unowned(unsafe) var nextOwned: SubscriptionNode?  // unowned(unsafe): see above
    @exclusivity(unchecked) unowned(unsafe) var previousOwned: SubscriptionNode?  // unowned(unsafe): see above

    /// The tokens of the bag the token was last put in, told when the subscription ends (and
    /// let go of then: see ``BagTokens``).
    @exclusivity(unchecked) var bag: BagTokens?

    /// The `freeWith` owner's type (introspection).
    let ownerType: Any.Type?
    /// Where the subscription was made.
    let callSite: CallSite

    /// A node not registered yet: `Registry.link` gives it its id, slot and bucket.
    init(
        key: String?, traits: SubscriptionTraits, ownerBelongsToMain: Bool, callSite: CallSite,
        container: BusCore
    ) {
        self.key = key
        self.isOwned = traits.isOwned
        self.level = traits.level
        self.callSite = callSite
        self.ownerType = traits.ownerType
        self.isInternal = traits.isInternal
        self.ownerBelongsToMain = ownerBelongsToMain
        self.container = container
    }

    /// How tokens and reclaims name the node's subscription.
    final var handle: SubscriptionHandle { SubscriptionHandle(id: id, slot: slot) }

    @inline(__always)
    private var livenessWord: UnsafeMutablePointer<Int> {
        _getUnsafePointerToStoredProperties(self).assumingMemoryBound(to: Int.self)
    }

    /// Whether the subscription may still be delivered to (an acquire load).
    @inline(__always)
    final var isLive: Bool { eventbus_atomic_load(livenessWord) == 1 }

    /// The `freeWith` owner, held weakly (overridden by ``Subscription``; `nil` for a node without
    /// one). Loading it retains it.
    var owner: AnyObject? { nil }

    /// Delivers the event at `event`, which is of the node's event type (a dispatch reaches only
    /// the nodes of its type). Overridden by ``Subscription`` and ``PlainSubscription``: a virtual
    /// call, so that the walk over a chunk is not generic (unspecialized generic code pays runtime
    /// metadata look-ups).
    func deliver(_ event: UnsafeRawPointer) -> Outcome {
        preconditionFailure("EventBus: a subscription node without a body")
    }

    /// Delivers the event at `event` to this node, the one at `slot` in a dispatch's chunk (skipped
    /// if the dispatch was stopped and this is not a monitor), counts the outcome in `delivery`,
    /// and returns the next slot to deliver to, at most `end`. ``PlainSubscription`` also delivers
    /// to the nodes of its own class that follow it: one virtual call for a run of them.
    func deliver(
        _ event: UnsafeRawPointer, at slot: ChunkSlot, before end: ChunkSlot, _ delivery: inout ChunkDelivery
    ) -> ChunkSlot {
        deliverAlone(event, at: slot, &delivery)
    }

    /// Delivers the event at `event` as ``deliver(_:)`` does, for a dispatch or a replay that holds
    /// an `.untilDelivered` event (`hold`): a delivery enqueued here finishes the hold when it runs
    /// (see ``StickyHold``). Overridden by ``Subscription``; other nodes never enqueue.
    func deliver(_ event: UnsafeRawPointer, holding hold: StickyHold) -> Outcome {
        deliver(event)
    }

    /// Delivers the event at `event` to this node alone, the one at `slot` in a dispatch's chunk,
    /// as ``deliver(_:at:before:_:)`` does (a chunk of one is delivered to this way: it needs no
    /// run), holding `hold` if there is one (``deliver(_:holding:)``).
    @inline(__always)
    final func deliverAlone(
        _ event: UnsafeRawPointer, at slot: ChunkSlot, holding hold: StickyHold? = nil, _ delivery: inout ChunkDelivery
    ) -> ChunkSlot {
        let outcome: Outcome
        if delivery.isStopped && !level.isMonitor {
            outcome = .ended
        } else if let hold {
            outcome = deliver(event, holding: hold)
        } else {
            outcome = deliver(event)
        }
        delivery.count(outcome, at: slot)
        return slot + 1
    }

    /// Runs `body` with the event at `event`, borrowed in place.
    ///
    /// Generic over a `~Copyable` type so that the compiler cannot copy the event: a typed node's
    /// `deliver`, unspecialized, would otherwise copy it into a buffer sized at run time, through
    /// its value witnesses, on every call. A handler `(E) -> Void` is passed as `body` as it is:
    /// it takes its argument as `(borrowing E) -> Void` does.
    @inline(__always)
    static func withEvent<Event: ~Copyable, Result>(
        at event: UnsafeRawPointer, as _: Event.Type, _ body: (borrowing Event) -> Result
    ) -> Result {
        body(event.assumingMemoryBound(to: Event.self).pointee)
    }

    /// Delivers `event`, which must be of the node's event type (a replayed sticky event), holding
    /// `hold` if there is one (``deliver(_:holding:)``).
    final func deliver<E>(event: E, holding hold: StickyHold? = nil) -> Outcome {
        withUnsafePointer(to: event) { event in
            hold.map { deliver(UnsafeRawPointer(event), holding: $0) } ?? deliver(UnsafeRawPointer(event))
        }
    }

    /// The event type (overridden by the typed subclasses).
    var subscribedType: Any.Type { preconditionFailure("EventBus: a subscription node without a body") }

    /// Where the handler runs (overridden by the typed subclasses).
    var delivery: SubscriptionInfo.Delivery {
        preconditionFailure("EventBus: a subscription node without a body")
    }

    /// The lane its deliveries wait in when they leave the dispatching thread; `nil` for a
    /// synchronous subscription (overridden by ``Subscription``).
    var lane: MailboxLaneBase? { nil }

    /// The subscription's keys, as `ofType` gave them (deduplicated): this primary node's, then its
    /// siblings'; empty for an unkeyed subscription. (`siblings` is not written once the node is
    /// registered, so this needs no lock.)
    final var keys: [String] {
        (key.map { [$0] } ?? []) + siblings.compactMap(\.key)
    }

    /// What introspection shows of the subscription (a registered primary node). Loads the owner,
    /// which retains it: a main-bound owner is only loaded on the main queue (elsewhere its
    /// liveness is reported as unknown). No lock held.
    final func info() -> SubscriptionInfo {
        var ownerAlive: Bool?
        if isOwned && (!ownerBelongsToMain || isOnMainQueue) { ownerAlive = owner != nil }
        let ownerTypeName: String? = ownerType.map { String(reflecting: $0) }
        let lane = self.lane
        let counts = lane?.counts ?? (pending: 0, dropped: 0)
        return SubscriptionInfo(
            id: id, typeName: eventTypeName(subscribedType), keys: keys,
            delivery: delivery, priority: level.priority, isMonitor: level.isMonitor,
            ownerType: ownerTypeName, isOwnerAlive: ownerAlive,
            callSite: callSite.description, isInternal: isInternal,
            buffering: lane?.buffering, pendingCount: counts.pending, droppedCount: counts.dropped)
    }

    /// Marks this node ended; `true` only for the one call that ended it.
    @inline(__always)
    final func end() -> Bool { eventbus_atomic_compare_exchange(livenessWord, 1, 0) }

    /// Hands an error thrown by this subscription's handler to its container's error handler, on
    /// this thread, with no lock held. (With the bus gone, it is printed in debug builds.)
    final func report(_ error: any Error, type: Any.Type) {
        let report = HandlerError(
            error: error, typeName: eventTypeName(type), subscriptionID: id, callSite: callSite)
        container.report(report, from: self)
    }
}

/// A subscription as tokens name it: its id, and its primary's slot in the container's table.
struct SubscriptionHandle: Hashable, Sendable {
    let id: UInt64
    let slot: UInt32
}
