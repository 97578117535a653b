/// The map's values without pointers, for its owners outside the engine (a bag's tokens): the
/// engine's own callers (a bucket's keys) edit values in place through ``IncrementalMap/Index``.
extension IncrementalMap {
    /// Sets the value of `key`, adding the entry if the key has none. Takes a step of a resize.
    mutating func updateValue(_ newValue: Value, forKey key: Key) {
        value(forKey: key, default: newValue).pointee = newValue
    }

    /// Calls `body` with each value (of both tables), in no particular order. O(capacity).
    func visitValues(_ body: (Value) -> Void) {
        forEachValue { body($0.pointee) }
    }
}
