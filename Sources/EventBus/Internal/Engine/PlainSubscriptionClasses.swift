internal import _EventBusShims

/// `PlainSubscription<E>.self` by the type id of `E`, for the whole process: a subscribe makes the
/// commonest node from it before taking the bus lock, without looking up the generic class's
/// metadata at run time (the library's generic code runs unspecialized, and would, each time).
///
/// A table of write-once entries whose words are atomics, read and claimed without a lock: an
/// entry, once published, never changes (type metadata, and so both words, live as long as the
/// process), so a reader that finds its type id may trust the class next to it. A type that finds
/// every entry of its probe sequence taken by others gets its class looked up the slow way.
final class PlainSubscriptionClasses: @unchecked Sendable {
    // @unchecked Sendable: the words are only touched through the C atomics, and an entry's class
    // word is written once, before its key word is published (release) and after it is claimed.

    /// The table every bus shares.
    static let shared = PlainSubscriptionClasses()

    /// Per entry: 0 (free), `claimed` (its class being written), or the published type id.
    private let keys: UnsafeMutablePointer<Int>
    /// Per entry: the class, as the bits of its metadata pointer, once its key is published.
    private let classes: UnsafeMutablePointer<Int>
    private static let count = 256  // a power of two
    private static let probes = 4
    private static let claimed = 1  // type metadata is word-aligned: never a type id

    private init() {
        keys = .allocate(capacity: Self.count)
        keys.initialize(repeating: 0, count: Self.count)
        classes = .allocate(capacity: Self.count)
        classes.initialize(repeating: 0, count: Self.count)
    }

    // Never deinitialized: `shared` lives as long as the process.

    /// `PlainSubscription<E>.self`. O(1): at most `probes` atomic loads once the type is in the
    /// table; its first use claims and fills an entry.
    @inline(__always)
    func plainClass<E: Sendable>(of _: E.Type) -> PlainSubscription<E>.Type {
        let typeID = Int(bitPattern: ObjectIdentifier(E.self))
        var slot = TypeIDCache.slot(of: ObjectIdentifier(E.self), count: Self.count)
        for _ in 0..<Self.probes {
            let key = eventbus_atomic_load(keys + slot)
            if key == typeID {
                // unsafeBitCast: the entry published for `E` holds `PlainSubscription<E>.self`.
                return unsafeBitCast(eventbus_atomic_load(classes + slot), to: PlainSubscription<E>.Type.self)
            }
            if key == 0 { return publish(E.self, at: slot) }
            slot = (slot + 1) & (Self.count - 1)
        }
        return PlainSubscription<E>.self
    }

    /// Looks up `PlainSubscription<E>.self` and publishes it in the free entry `slot`, unless
    /// another thread claimed it first.
    @inline(never)
    private func publish<E: Sendable>(_: E.Type, at slot: Int) -> PlainSubscription<E>.Type {
        let plainClass = PlainSubscription<E>.self
        if eventbus_atomic_compare_exchange(keys + slot, 0, Self.claimed) {
            eventbus_atomic_store(classes + slot, unsafeBitCast(plainClass, to: Int.self))
            eventbus_atomic_store(keys + slot, Int(bitPattern: ObjectIdentifier(E.self)))
        }
        return plainClass
    }
}
