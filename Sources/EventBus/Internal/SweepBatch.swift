/// The owned subscriptions one bus operation checks for a dead owner: picked under the lock,
/// checked after unlocking (loading an owner retains it, and its release may run its `deinit`).
///
/// Two inline slots: no allocation.
struct SweepBatch: ~Copyable {
    private var first: SubscriptionNode?
    private var second: SubscriptionNode?
    /// Set when the sweep skipped a full turn's worth of main-bound owners off the main queue: the
    /// caller schedules a pass there.
    var mainSweepDue = false

    init() {}

    var isFull: Bool { second != nil }

    /// Adds `node` unless its owner may only be released on the main queue and this is not it.
    @inline(__always)
    mutating func add(_ node: SubscriptionNode, skippedMainBound: inout Int) {
        if node.ownerBelongsToMain && !isOnMainQueue {
            skippedMainBound += 1
            return
        }
        if first == nil { first = node } else { second = node }
    }

    /// Ends the subscriptions whose owner is gone and has `container` forget them. No lock held.
    @inline(__always)
    consuming func check(in container: SubscriptionIndex) {
        // Most operations pick nothing: that case costs two loads.
        guard first != nil || mainSweepDue else { return }
        checkPicked(in: container)
    }

    @inline(never)
    private consuming func checkPicked(in container: SubscriptionIndex) {
        if mainSweepDue { container.scheduleMainSweep() }
        guard first != nil else { return }
        let firstDead = first.map(Self.ownerIsGone) ?? false
        let secondDead = second.map(Self.ownerIsGone) ?? false
        // Without allocating (an array of the two would be one allocation per reclaim).
        switch (firstDead ? first?.handle : nil, secondDead ? second?.handle : nil) {
        case (let one?, let other?):
            container.reclaim(CollectionOfOne(one))
            container.reclaim(CollectionOfOne(other))
        case (let one?, nil), (nil, let one?):
            container.reclaim(CollectionOfOne(one))
        case (nil, nil):
            break
        }
    }

    /// Whether `node` is live and its owner gone. (Loading the owner retains it: call it with no
    /// lock held, and for a main-bound owner only on the main queue.)
    static func ownerIsGone(_ node: SubscriptionNode) -> Bool {
        node.isLive && node.owner == nil
    }
}
