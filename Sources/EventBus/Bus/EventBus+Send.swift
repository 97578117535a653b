extension EventBus {
    /// Delivers `event` as ``dispatch(_:)`` does, after waiting while a subscriber it would reach
    /// with a back-pressure bound (``EventBuffering/backPressure(highWatermark:limit:)``) has more
    /// than its high watermark waiting: the way a producer slows down to its slowest bounded
    /// consumer instead of dropping.
    ///
    /// The wait comes before the walk, so the event reaches every subscriber at once afterwards,
    /// as a dispatch does (synchronous subscribers on the calling thread). Only subscriptions to
    /// the event's own type, with its key or none, are waited for; one reached as a supertype
    /// (``Supertype``) is bounded by its limit, and drops above it. With *k* senders passing the
    /// check at once, a lane holds at most its high watermark + *k*, never more than its limit. If
    /// the task is cancelled, `send` stops waiting and dispatches at once (above the limit the
    /// event is dropped, and counted). With no back-pressure subscriber, it costs one atomic load
    /// more than `dispatch`.
    ///
    /// ```swift
    /// let writer = DispatchQueue(label: "writer")
    /// bus.on(LoginEvent.self).atQueue(writer)
    ///     .buffering(.backPressure(highWatermark: 100, limit: 1_000))
    ///     .next { login in print("stored", login.userID) }
    /// for id in 0..<10_000 {
    ///     await bus.send(LoginEvent(userID: "\(id)"))   // waits while 100 wait for the writer
    /// }
    /// ```
    public func send<E: Event>(_ event: E) async {
        await core.backPressure.waitForRoom(type: ObjectIdentifier(E.self), key: event._routingKey)
        dispatch(event)
    }

    /// How many deliveries the bound of a subscription of this bus dropped (see
    /// ``EventBuffering``), from the bus's start: what a metrics counter of drops reads. O(1), an
    /// atomic load; a snapshot.
    ///
    /// ```swift
    /// let bus = EventBus()
    /// let slow = DispatchQueue(label: "slow")
    /// _ = bus.on(LoginEvent.self).atQueue(slow).buffering(.bufferingOldest(0)).next { _ in }
    /// bus.dispatch(LoginEvent(userID: "42"))
    /// print(bus.droppedDeliveryCount)   // prints: 1
    /// ```
    public var droppedDeliveryCount: Int { core.droppedDeliveries.current }
}
