@_spi(Integrations) public import EventBus

/// Records the events of one type that a bus dispatches, in dispatch order, from the moment it is
/// made until it is disposed or deallocated. Made by ``EventBus/record(_:ofType:)``.
///
/// Thread-safe: events dispatched from several threads are recorded as they are delivered (each
/// dispatching thread's in its order). Its subscription is synchronous and internal: it does not
/// count in ``EventBus/subscriptionCount`` or ``EventBus/requireNoLiveSubscriptions()``.
///
/// ```swift
/// let bus = EventBus()
/// let logins = bus.record(LoginEvent.self)
/// bus.dispatch(LoginEvent(userID: "42"))
/// assert(logins.events.map(\.userID) == ["42"])
/// ```
public final class EventRecorder<E: Event>: Sendable {
    private let recorded: Locked<[E]>
    private let token: EventToken

    init(bus: EventBus, key: String?) {
        let recorded = Locked<[E]>([])
        var maker = bus.on(E.self).markedInternal()
        if let key { maker = maker.ofType(key) }
        token = maker.next { event in recorded.withLock { $0.append(event) } }
        self.recorded = recorded
    }

    deinit { token.dispose() }

    /// The events recorded so far, oldest first.
    ///
    /// ```swift
    /// let logins = bus.record(LoginEvent.self)
    /// bus.dispatch(LoginEvent(userID: "42"))
    /// print(logins.events)   // [LoginEvent(userID: "42")]
    /// ```
    public var events: [E] { recorded.withLock { $0 } }

    /// How many events were recorded.
    ///
    /// ```swift
    /// assert(bus.record(LoginEvent.self).count == 0)
    /// ```
    public var count: Int { recorded.withLock { $0.count } }

    /// The newest event recorded, if any.
    ///
    /// ```swift
    /// let logins = bus.record(LoginEvent.self)
    /// bus.dispatch(LoginEvent(userID: "42"))
    /// assert(logins.last?.userID == "42")
    /// ```
    public var last: E? { recorded.withLock { $0.last } }

    /// Forgets the events recorded so far; recording goes on.
    ///
    /// ```swift
    /// logins.removeAll()
    /// assert(logins.count == 0)
    /// ```
    public func removeAll() {
        recorded.withLock { $0.removeAll() }
    }

    /// Stops recording (the events recorded so far stay). Also done when the recorder is
    /// deallocated.
    ///
    /// ```swift
    /// logins.dispose()
    /// bus.dispatch(LoginEvent(userID: "7"))   // not recorded
    /// ```
    public func dispose() {
        token.dispose()
    }
}
