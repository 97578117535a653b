/// What the registry let go of under its lock, dealt with after unlocking: objects to release (so no
/// `deinit` runs under the lock), bags to tell, work hooks asked for.
///
/// The common cases (a dispose retires one node) fit inline: no allocation.
package struct Retired: ~Copyable {
    /// What an operation retires beyond its first object: rarer, kept together so that dropping a
    /// `Retired` that holds one object or none costs two releases of which one is of `nil`.
    private enum Entry {
        /// An object to release.
        case object(AnyObject)
        /// A bag whose token's subscription ended, with that subscription's id.
        case bag(BagTokens, UInt64)
        /// A work hook decided on under the lock (installing an observer, reporting a refusal).
        case work(() -> Void)
    }

    private var first: AnyObject?
    private var more: [Entry]?

    init() {}

    /// Room for `count` objects, allocated now (call it before taking the lock: an allocation
    /// under the lock would make every thread waiting for it wait for the allocator too).
    init(capacity count: Int) {
        guard count > 1 else { return }
        more = []
        more!.reserveCapacity(count - 1)
    }

    // Unmanaged: `reference` is owned (+1) by the caller, and released here by `settle`.
    mutating func adopt(_ reference: Unmanaged<SubscriptionNode>) {
        add(reference.takeRetainedValue())
    }

    package mutating func add(_ object: consuming AnyObject) {
        if first == nil { first = object } else { append(.object(object)) }
    }

    mutating func tell(_ bag: BagTokens, forget id: UInt64) {
        append(.bag(bag, id))
    }

    package mutating func afterUnlock(_ body: @escaping () -> Void) {
        append(.work(body))
    }

    private mutating func append(_ entry: consuming Entry) {
        if more == nil { more = [entry] } else { more!.append(entry) }
    }

    /// Tells the bags and runs the work hooks, in the order they came, then releases the objects
    /// (through ``ReleaseLoop``: their deinits may call the bus again). No lock may be held.
    @inline(__always)
    consuming func settle() {
        guard more == nil else {
            settleAll()
            return
        }
        // Most operations retire nothing (two loads, no call) or one object (a dispose's node).
        if first != nil { ReleaseLoop.drop(first.take()) }
    }

    @inline(never)
    private consuming func settleAll() {
        if let more {
            for entry in more {
                switch entry {
                case .object: break  // released with `more`, after the hooks
                case .bag(let bag, let id): bag.forget(id)
                case .work(let body): body()
                }
            }
        }
        ReleaseLoop.drop((first.take(), more.take()))
    }
}
