/// A ``DurableStore`` that wakes the readers of its channel itself, in the process: each append
/// and each lease given up wakes every registered ``DurableWaker``.
///
/// ``DurableTransport`` registers the waker of each reader it runs, so that a reader reads an
/// event as soon as it is appended instead of at its next poll. A store that cannot wake (one
/// whose writers are other processes, with no signal of their own) does not conform: its readers
/// poll (``DurableReading/pollInterval``).
///
/// Both methods may be called from any thread; a waker is woken on the thread of the append (or
/// the release) that wakes it, outside the store's lock.
///
/// ```swift
/// let waker = DurableWaker()
/// store.register(waker)
/// defer { store.unregister(waker) }
/// await waker.wait(atMost: .seconds(1))   // returns at the next append, or after a second
/// ```
public protocol WakingDurableStore: DurableStore {
    /// Wakes `waker` at every append and every lease given up, until it is unregistered.
    /// Registering a waker twice registers it once.
    func register(_ waker: DurableWaker)

    /// Stops waking `waker`; nothing if it is not registered.
    func unregister(_ waker: DurableWaker)
}
