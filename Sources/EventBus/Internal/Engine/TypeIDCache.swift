internal import _EventBusShims

/// A direct-mapped set of event type ids whose words are atomics: written under the bus's lock,
/// read without it.
///
/// It holds facts that never change for a type (the registry keeps there the types that have neither
/// hooks nor supertypes), so a reader that finds a type in it may trust it however stale its view
/// is; a type that is not found (never inserted, or evicted by another of the same slot) is
/// checked the slow way.
final class TypeIDCache: @unchecked Sendable {
    // @unchecked Sendable: the words are only touched through the C atomics.
    private let words: UnsafeMutablePointer<Int>
    private static let count = 32  // a power of two

    init() {
        words = .allocate(capacity: Self.count)
        words.initialize(repeating: 0, count: Self.count)
    }

    deinit {
        words.deallocate()
    }

    /// Whether `typeID` is in the set. O(1), an atomic load.
    @inline(__always)
    func contains(_ typeID: ObjectIdentifier) -> Bool {
        eventbus_atomic_load(words + Self.slot(of: typeID)) == Int(bitPattern: typeID)
    }

    /// Puts `typeID` in the set, in place of the type that had its slot.
    func insert(_ typeID: ObjectIdentifier) {
        eventbus_atomic_store(words + Self.slot(of: typeID), Int(bitPattern: typeID))
    }

    /// The slot of `typeID` in a direct-mapped table of `count` entries (a power of two).
    @inline(__always)
    static func slot(of typeID: ObjectIdentifier, count: Int = TypeIDCache.count) -> Int {
        // Type metadata is word-aligned: drop the low bits, fold in some higher ones.
        let bits = UInt(bitPattern: typeID)
        return Int(truncatingIfNeeded: (bits >> 4) ^ (bits >> 11)) & (count - 1)
    }
}
