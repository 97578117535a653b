extension SubscriberMaker where Delivery: EnqueuingDelivery {
    /// Bounds the deliveries waiting for this subscription, and says what happens above the bound
    /// (see ``EventBuffering``): keep everything (the default), keep the newest or the oldest *n*,
    /// or back-pressure for ``EventBus/send(_:)``. Offered after ``atQueue(_:)``,
    /// ``onMainActor()`` and ``isolated(to:)``, whose deliveries wait in a mailbox; a synchronous
    /// handler has nothing waiting. A later call replaces an earlier one.
    ///
    /// Every drop is counted (``SubscriptionInfo/droppedCount``, ``EventBus/droppedDeliveryCount``)
    /// and traced (``TraceRecord/dropped(_:)``). On dispose, the deliveries waiting end unrun, as
    /// without a bound.
    ///
    /// ```swift
    /// actor Thumbnailer {
    ///     var rendered = 0
    ///     func start(on bus: EventBus) {
    ///         // A slow consumer keeps at most 100 waiting; older requests give way to newer ones.
    ///         bus.on(LoginEvent.self).isolated(to: self).buffering(.bufferingNewest(100))
    ///             .next { thumbnailer, _ in thumbnailer.rendered += 1 }
    ///     }
    /// }
    /// ```
    public consuming func buffering(_ buffering: EventBuffering) -> Self {
        options.buffering = buffering
        return self
    }
}
