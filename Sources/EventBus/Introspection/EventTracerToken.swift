/// The handle of a tracer added with ``EventConfigurable/addTracer(_:)``: ``remove()`` takes that
/// tracer, and only that one, off its bus or node.
///
/// A tracer stays until it is removed or its bus (or node) is deallocated; dropping the token does
/// not remove it (keep the token if you will remove the tracer). Removing it twice, or after the bus
/// is gone, does nothing. The token keeps no bus alive.
///
/// ```swift
/// let bus = EventBus()
/// let token = bus.addTracer { record in print(record) }
/// bus.dispatch(LoginEvent(userID: "42"))   // prints "dispatched MyApp.LoginEvent: 0 delivered, 0 enqueued"
/// token.remove()
/// bus.dispatch(LoginEvent(userID: "42"))   // prints nothing
/// ```
public struct EventTracerToken: Sendable {
    /// The tracers the tracer was added to.
    private let tracers: TracerSet
    /// The tracer's id in `tracers`.
    private let id: UInt64?

    /// The token of the tracer `id` of `tracers` (`nil`: it was never added, its bus being gone).
    init(_ tracers: TracerSet, id: UInt64?) {
        self.tracers = tracers
        self.id = id
    }

    /// Takes the tracer off its bus or node, leaving the others: it gets no record of work that
    /// starts after this returns. A record already being handed to it on another thread may still
    /// arrive; called from the tracer itself, the record under way is its last. Thread-safe; its
    /// release happens after the bus lets go of its locks (the deinits of what it captured may
    /// call the bus).
    ///
    /// ```swift
    /// let token = bus.addTracer { record in print(record) }
    /// token.remove()
    /// ```
    public func remove() {
        guard let id else { return }
        tracers.remove(id)
    }

    /// Whether the tracer is off its bus: removed, or its bus (or node) deallocated.
    ///
    /// ```swift
    /// let token = bus.addTracer { _ in }
    /// token.remove()
    /// assert(token.isRemoved)
    /// ```
    public var isRemoved: Bool {
        guard let id else { return true }
        return tracers.isRemoved(id)
    }
}
