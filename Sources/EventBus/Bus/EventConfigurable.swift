/// What can be configured as a bus is, in one place: an ``EventBus``, an ``EventNode`` and a
/// ``MainActorEventNode`` offer the same settings, written once here: tracers
/// (``tracer``, ``addTracer(_:)``), the context propagator (``contextPropagator``) and the
/// handler-error handler (``handlerErrorHandler``).
///
/// Each bus and each node has settings of its own: a node's are not its parent's, nor a bus's. Every
/// setting can be read and changed from any thread, at any time; what a change replaces is released
/// after the bus lets go of its lock (the deinits of what it captured may call the bus). A bus's
/// own settings (``EventBus/deadEventHandler``, its clock) stay on ``EventBus``.
///
/// ```swift
/// let bus = EventBus()
/// let node = EventNode(name: "Cart")
/// for configurable in [bus, node] as [any EventConfigurable] {
///     configurable.handlerErrorHandler = { failure in print(failure) }
/// }
/// ```
public protocol EventConfigurable: AnyObject, Sendable {
    /// The settings this type's members read and write: its own bus's, or those of the bus or node
    /// it wraps.
    ///
    /// ```swift
    /// final class CartModule: EventConfigurable {
    ///     let node = EventNode(name: "Cart")
    ///     var configuration: EventConfiguration { node.configuration }
    /// }
    /// ```
    var configuration: EventConfiguration { get }
}

extension EventConfigurable {
    /// A tracer: receives a ``TraceRecord`` for every dispatch, subscription, end of a subscription,
    /// dead event, dropped delivery and handler error on this bus, and, on a node, for each post
    /// that reaches it (``TraceRecord/chainHop(_:)``: what the node did with it; requests are not
    /// traced). Called after the bus let go of its lock, on the thread that did the work (a node's
    /// posting thread; a ``MainActorEventNode``'s posts run on the main queue). `nil` (the default).
    ///
    /// This is one tracer among those the bus calls: the one this property sets. Tracers added with
    /// ``addTracer(_:)`` (what the logging and metrics integrations use) are called after it, and
    /// setting this property, `nil` included, never removes them. With no tracer at all nothing is
    /// recorded and a dispatch pays one load; with one, what it did before there were several.
    ///
    /// The closure must be thread-safe; it may call into the bus (a dispatch from it is traced
    /// too, so guard against feeding it back to itself). The closure it replaces is released after
    /// the bus lets go of its lock. A node's tracer sees that node only: set it on each node you
    /// want to watch.
    ///
    /// ```swift
    /// let bus = EventBus()
    /// bus.tracer = { record in print(record) }
    /// bus.dispatch(LoginEvent(userID: "42"))   // prints "dispatched MyApp.LoginEvent: 0 delivered, 0 enqueued"
    /// ```
    public var tracer: (@Sendable (TraceRecord) -> Void)? {
        get { configuration.bus.tracers.primary }
        set { configuration.bus.tracers.setPrimary(newValue) }
    }

    /// Adds `tracer` beside the bus's other tracers, and returns the token that removes it: each
    /// integration (logging, metrics) installs its own, and none displaces another, as with
    /// swift-log's `MultiplexLogHandler`.
    ///
    /// The tracer receives what ``tracer`` would, from the next record on: on the thread that did
    /// the work, after the bus let go of its lock. Tracers are called one after the other, the
    /// ``tracer`` property's first, then the added ones in the order they were added. A tracer stays
    /// until ``EventTracerToken/remove()`` or until the bus (or node) is deallocated; dropping the
    /// token does not remove it. Thread-safe.
    ///
    /// ```swift
    /// let bus = EventBus()
    /// let printing = bus.addTracer { record in print(record) }
    /// let counting = bus.addTracer { _ in }   // does not replace the first
    /// bus.dispatch(LoginEvent(userID: "42"))   // prints "dispatched MyApp.LoginEvent: 0 delivered, 0 enqueued"
    /// printing.remove()   // `counting` stays
    /// counting.remove()
    /// ```
    public func addTracer(_ tracer: @escaping @Sendable (TraceRecord) -> Void) -> EventTracerToken {
        let tracers = configuration.bus.tracers
        return EventTracerToken(tracers, id: tracers.add(tracer))
    }

    /// Carries a context (a trace, a request's baggage) from the dispatching task or thread to
    /// the handlers that run elsewhere: on a queue, on the main actor (when enqueued), in an
    /// ``EventStream/consume(isolation:_:)`` loop, to the dispatch that
    /// ``EventBus/dispatchOnBusQueue(_:)`` and ``EventBus/dispatchOnMain(_:)`` make later, and from
    /// a ``MainActorEventNode/post(_:)`` made off the main queue to the main queue, where it runs.
    /// See ``EventContextPropagator``.
    ///
    /// `nil` (the default): nothing is captured or allocated; a delivery that leaves the
    /// dispatching thread pays one atomic load, a synchronous one nothing. When set, each such
    /// delivery pays one lock acquisition, the propagator's capture (on the dispatching thread)
    /// and its restore (where the handler runs). Deliveries enqueued before a change keep the
    /// propagator they were captured with. The one it replaces is released after the bus lets go
    /// of its lock; a dispose behaves as without a propagator. Each node has its own: set it on
    /// every node whose queued subscriptions should see the poster's context (handlers called on
    /// the posting thread see its context without one). `Integrations/EventBusTracing` sets one for
    /// swift-distributed-tracing's `ServiceContext`.
    ///
    /// ```swift
    /// let bus = EventBus()
    /// bus.contextPropagator = TaskLocalContextPropagator(RequestID.$current)
    /// RequestID.$current.withValue("req-7") {
    ///     bus.dispatch(LoginEvent(userID: "42"))   // a queued handler sees "req-7" too
    /// }
    /// ```
    public var contextPropagator: (any EventContextPropagator)? {
        get { configuration.bus.core.contextPropagator }
        set { configuration.bus.core.contextPropagator = newValue }
    }

    /// Called with each error a throwing handler (`next { event throws in … }`) throws, on the
    /// handler's thread (the main actor for a ``MainActorEventNode``'s handlers) and with no lock
    /// held. The error never reaches the dispatcher, and the other subscribers still run.
    ///
    /// `nil` (the default): debug builds print the first error of each subscription to standard
    /// error, release builds stay silent. The handler it replaces is released after the bus lets go
    /// of its lock.
    ///
    /// ```swift
    /// let bus = EventBus()
    /// bus.handlerErrorHandler = { failure in print(failure) }
    /// bus.on(LoginEvent.self).next { event throws in
    ///     if event.userID.isEmpty { throw CancellationError() }
    /// }
    /// ```
    public var handlerErrorHandler: (@Sendable (HandlerError) -> Void)? {
        get { configuration.bus.core.handlerErrorHandler }
        set { configuration.bus.core.handlerErrorHandler = newValue }
    }
}
