internal import _EventBusShims

/// The part of a subscription that a container manipulates without knowing its event type: the
/// liveness word, the owner, and the links of the lists it sits in.
///
/// A subscription to several keys (`ofType` chained) is one node per key: the first is the
/// *primary*, the others its *siblings*; they share the id, the body and the owner, and end together.
/// ``Subscription`` adds the typed body.
class SubscriptionNode: @unchecked Sendable {
    // @unchecked Sendable: `liveness` is only touched through the C atomics; the links, `pins`,
    // `unlinkWhenUnpinned`, `primary` and `bag` only under the lock of the container the node is in;
    // everything else is immutable after init (`owner` and `container` are weak references written
    // once in init).

    /// 1 while the subscription is live, 0 once it has ended. It must stay the first stored
    /// property: its address is taken for the atomics (`livenessWord`), never read as a property.
    private var liveness: Int = 1

    /// Unique in the process (`EventToken` equality), from a counter; also orders a list.
    let id: UInt64
    /// The key of the list this node sits in, `nil` for the unkeyed list.
    let key: String?
    /// Whether the subscription was bound to an owner with `freeWith`.
    let isOwned: Bool
    /// The `freeWith` owner, held weakly.
    weak var owner: AnyObject?
    /// Whether the owner may only be released on the main queue (main-actor and `atQueue(.main)`
    /// subscriptions): the sweep never loads it on another thread.
    let ownerBelongsToMain: Bool
    /// The bucket the node is filed in. Read only under the lock while `isLinked` (a bucket with a
    /// linked node is never removed).
    unowned(unsafe) let bucket: Bucket  // unowned(unsafe): valid while linked, see above
    /// Where the node is registered; `nil` once that container is gone.
    weak var container: (any SubscriptionContainer)?

    /// The other keys' nodes of the same subscription (empty for all but multi-key subscriptions).
    @exclusivity(unchecked) var siblings: [SubscriptionNode] = []
    /// For a sibling, the primary node. Weak: a primary owns its siblings.
    @exclusivity(unchecked) weak var primary: SubscriptionNode?

    // List links, under the container's lock (which also makes the runtime's dynamic exclusivity
    // checks redundant: they would cost more than the linking).
    @exclusivity(unchecked) var next: SubscriptionNode?
    @exclusivity(unchecked) unowned(unsafe) var previous: SubscriptionNode?  // unowned(unsafe): the list owns every node through `next`
    @exclusivity(unchecked) var isLinked = false
    /// How many dispatches in progress resume their walk after this node. A pinned node that ends
    /// stays in its list (ended, so never delivered to) until the last of them moves on.
    @exclusivity(unchecked) var pins = 0
    @exclusivity(unchecked) var unlinkWhenUnpinned = false

    // Links of the container's ring of owned primaries, which the incremental sweep walks. A node
    // is in the ring only while it is linked in its list, which owns it.
    @exclusivity(unchecked) unowned(unsafe) var nextOwned: SubscriptionNode?  // unowned(unsafe): see above
    @exclusivity(unchecked) unowned(unsafe) var previousOwned: SubscriptionNode?  // unowned(unsafe): see above
    @exclusivity(unchecked) var isInOwnedRing = false

    /// The bag the token was last put in, told when the subscription ends.
    @exclusivity(unchecked) weak var bag: DisposeBag?

    init(
        id: UInt64, key: String?, owner: AnyObject?, isOwned: Bool, ownerBelongsToMain: Bool, bucket: Bucket,
        container: any SubscriptionContainer
    ) {
        self.id = id
        self.bucket = bucket
        self.key = key
        self.owner = owner
        self.isOwned = isOwned
        self.ownerBelongsToMain = ownerBelongsToMain
        self.container = container
    }

    @inline(__always)
    private var livenessWord: UnsafeMutablePointer<Int> {
        _getUnsafePointerToStoredProperties(self).assumingMemoryBound(to: Int.self)
    }

    /// Whether the subscription may still be delivered to (an acquire load).
    @inline(__always)
    final var isLive: Bool { eventbus_atomic_load(livenessWord) == 1 }

    /// Marks this node ended; `true` only for the one call that ended it.
    @inline(__always)
    final func end() -> Bool { eventbus_atomic_compare_exchange(livenessWord, 1, 0) }

    /// Ends the whole subscription (this node's primary and its siblings); `true` only for the
    /// call that ended it. Lock-free: safe while the container is being deallocated elsewhere.
    final func endSubscription() -> Bool {
        let primary = self.primaryNode
        guard primary.end() else { return false }
        for sibling in primary.siblings { _ = sibling.end() }
        return true
    }

    /// The node that stands for the whole subscription. (A sibling whose primary is gone belongs
    /// to a subscription that has already been unlinked; it stands for itself.)
    final var primaryNode: SubscriptionNode { primary ?? self }

    /// `dispose()`: ends the subscription and has its container forget it.
    final func dispose() {
        guard endSubscription() else { return }
        container?.remove(primaryNode)
    }
}

/// Where subscriptions are registered: the bus's type index (and, later, an event-chain node).
///
/// A container takes its own lock, decides, and acts outside it; it never runs user code under it.
protocol SubscriptionContainer: AnyObject, Sendable {
    /// Forgets `subscription` (a primary node that was just ended) in O(1) per key, releasing what
    /// it held after unlocking.
    func remove(_ subscription: SubscriptionNode)
    /// Forgets the subscriptions of `nodes` whose owner was found gone (they are already ended).
    func reclaim(_ nodes: some Sequence<SubscriptionNode>)
    /// Records that `node`'s token is held by `bag`; tells the bag at once if it has already ended.
    func attach(_ node: SubscriptionNode, to bag: DisposeBag)
}
