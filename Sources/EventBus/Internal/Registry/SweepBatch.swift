/// The owned subscriptions one bus operation checks for a dead owner: picked under the lock,
/// checked after unlocking (loading an owner retains it, and its release may run its `deinit`).
///
/// Two inline slots: no allocation. The picked nodes are retained (a node may be unlinked and
/// released by another thread once the lock is let go of), as unmanaged references: a batch that
/// picked nothing, the commonest case, is then dropped with no reference counting at all.
struct SweepBatch: ~Copyable {
    // Unmanaged: each is retained by `add` and released by `checkPicked` (or `deinit`).
    private var first: Unmanaged<SubscriptionNode>?
    private var second: Unmanaged<SubscriptionNode>?  // Unmanaged: as `first`
    /// Set when the sweep skipped a full turn's worth of main-bound owners off the main queue: the
    /// caller schedules a pass there.
    var mainSweepDue = false

    init() {}

    /// Only a batch dropped without being checked gets here: it lets go of what it picked.
    deinit {
        // Unmanaged: the references `add` took.
        first?.release()
        second?.release()
    }

    var isFull: Bool { second != nil }

    /// Adds `node` unless its owner may only be released on the main queue and this is not it.
    @inline(__always)
    mutating func add(_ node: SubscriptionNode, skippedMainBound: inout Int) {
        if node.ownerBelongsToMain && !isOnMainQueue {
            skippedMainBound += 1
            return
        }
        // Unmanaged: retained here, released by `checkPicked` (or `deinit`).
        if first == nil { first = .passRetained(node) } else { second = .passRetained(node) }
    }

    /// Ends the subscriptions whose owner is gone and has `container` forget them. No lock held.
    @inline(__always)
    consuming func check(in container: BusCore) {
        // Most operations pick nothing: that case costs two loads.
        guard first != nil || mainSweepDue else {
            discard self
            return
        }
        checkPicked(in: container)
    }

    @inline(never)
    private consuming func checkPicked(in container: BusCore) {
        let mainSweepDue = mainSweepDue
        // Unmanaged: the references `add` took.
        let first = first?.takeRetainedValue()
        let second = second?.takeRetainedValue()
        discard self
        if mainSweepDue { container.scheduleMainSweep() }
        guard let first else { return }
        let firstDead = Self.ownerIsGone(first)
        let secondDead = second.map(Self.ownerIsGone) ?? false
        // Without allocating (an array of the two would be one allocation per reclaim).
        switch (firstDead ? first.handle : nil, secondDead ? second?.handle : nil) {
        case (let one?, let other?):
            container.reclaim(CollectionOfOne(one))
            container.reclaim(CollectionOfOne(other))
        case (let one?, nil), (nil, let one?):
            container.reclaim(CollectionOfOne(one))
        case (nil, nil):
            break
        }
        // Often the last references: their deinits may call the bus, whose sweep may reclaim more.
        ReleaseLoop.drop((consume first, consume second))
    }

    /// Whether `node` is live and its owner gone. (Loading the owner retains it: call it with no
    /// lock held, and for a main-bound owner only on the main queue.)
    static func ownerIsGone(_ node: SubscriptionNode) -> Bool {
        node.isLive && node.owner == nil
    }
}
