/// What the index let go of under its lock, dealt with after unlocking: objects to release (so no
/// `deinit` runs under the lock), bags to tell, work hooks asked for.
///
/// The common cases (a dispose retires one node) fit inline: no allocation.
package struct Retired: ~Copyable {
    private var first: AnyObject?
    private var more: [AnyObject]?
    /// Bags whose token's subscription ended, with that subscription's id.
    private var bags: [(BagTokens, UInt64)]?
    /// Work hooks decided on under the lock (installing an observer, reporting a refusal).
    private var work: [() -> Void]?

    init() {}

    /// Room for `count` objects, allocated now (call it before taking the lock: an allocation
    /// under the lock would make every thread waiting for it wait for the allocator too).
    init(capacity count: Int) {
        guard count > 1 else { return }
        more = []
        more!.reserveCapacity(count - 1)
    }

    /// Takes over a reference the caller holds unmanaged (a list's: see `SubscriberList`).
    // Unmanaged: `reference` is owned (+1) by the caller, and released here by `settle`.
    mutating func adopt(_ reference: Unmanaged<SubscriptionNode>) {
        add(reference.takeRetainedValue())
    }

    package mutating func add(_ object: consuming AnyObject) {
        if first == nil {
            first = object
        } else {
            if more == nil { more = [object] } else { more!.append(object) }
        }
    }

    mutating func tell(_ bag: BagTokens, forget id: UInt64) {
        if bags == nil { bags = [(bag, id)] } else { bags!.append((bag, id)) }
    }

    package mutating func afterUnlock(_ body: @escaping () -> Void) {
        if work == nil { work = [body] } else { work!.append(body) }
    }

    /// Tells the bags, runs the work, then releases everything. Call it with no lock held.
    consuming func settle() {
        if let bags { for (bag, id) in bags { bag.forget(id) } }
        if let work { for body in work { body() } }
    }
}
