internal import _EventBusShims

/// A counter (or any word) read and written only through the C atomics (no lock).
final class AtomicCounter: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched through the C atomics, by its address.

    /// The counter. It must stay the first stored property: its address is taken (`word`), it is
    /// never read as a property.
    private var value = 0

    private var word: UnsafeMutablePointer<Int> {
        _getUnsafePointerToStoredProperties(self).assumingMemoryBound(to: Int.self)
    }

    /// Adds `delta` (an acquire-release read-modify-write) and returns the new value.
    @discardableResult
    func add(_ delta: Int) -> Int {
        eventbus_atomic_add(word, delta)
    }

    /// Replaces the value (a release store).
    func store(_ value: Int) {
        eventbus_atomic_store(word, value)
    }

    /// The current value (an acquire load).
    var current: Int { eventbus_atomic_load(word) }
}
