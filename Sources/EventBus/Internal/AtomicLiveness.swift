internal import _EventBusShims

/// One word that says whether a subscription may still be delivered to.
///
/// Read without the bus lock on every delivery (acquire), written once by `dispose` (compare-and-swap),
/// so a dispatch on another thread sees a `dispose()` that returned before it looked.
struct AtomicLiveness: ~Copyable {
    private let word: UnsafeMutablePointer<Int>

    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: 1)
    }

    deinit { word.deallocate() }

    /// `true` until `end()` is first called.
    @inline(__always)
    var isLive: Bool { eventbus_atomic_load(word) == 1 }

    /// Marks the subscription ended; returns `true` only for the one call that ended it.
    @inline(__always)
    func end() -> Bool { eventbus_atomic_compare_exchange(word, 1, 0) }
}
