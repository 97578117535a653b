/// What the core reads of its registry without the lock: one snapshot, which the registry publishes
/// at the end of the operations that change it (atomic stores under the lock; a reader sees what the
/// last change made before its read, in happens-before order, published).
///
/// It lets a dispatch that nobody listens to take no lock (``findsNothing(_:)``) and a delivery
/// that leaves the thread skip the context hook when no propagator is set. A value of three
/// references, which the registry and its core share: the core keeps it inline, so a read is one
/// load and an atomic load, as with a field of its own.
struct RegistrySnapshot: Sendable {
    /// Bit `Registry.summaryBit(of:)` is set while a type with that bit has a bucket; every bit
    /// while a tracer or a dead-event handler is set.
    let typeSummary = AtomicCounter()
    /// Types recently dispatched with no bucket that have neither hooks nor supertypes (facts that
    /// never change for a type: a reader may trust them however stale its view).
    let unhookedTypes = TypeIDCache()
    /// 1 while a context propagator is set, else 0.
    let propagates = AtomicCounter()

    /// Whether `typeID` may have a bucket: `false` means it had none when the last change made
    /// before this call was published. O(1), an atomic load.
    @inline(__always)
    func mayHaveBucket(_ typeID: ObjectIdentifier) -> Bool {
        typeSummary.current & (1 << Registry.summaryBit(of: typeID)) != 0
    }

    /// Whether a plain dispatch of `typeID` would find nothing to do: no bucket (so no subscriber
    /// and nothing kept), no dead-event handler or tracer, and neither hooks nor supertypes (which
    /// would need a bucket made). O(1), two atomic loads.
    @inline(__always)
    func findsNothing(_ typeID: ObjectIdentifier) -> Bool {
        !mayHaveBucket(typeID) && unhookedTypes.contains(typeID)
    }
}
