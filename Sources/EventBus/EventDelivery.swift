/// Where a maker's handler runs: the `Delivery` parameter of ``SubscriberMaker``.
///
/// You never create these; they let the compiler offer only the handlers that fit the chain
/// (`@MainActor` ones after `onMainActor()`, nonisolated ones otherwise).
///
/// ```swift
/// let maker: SubscriberMaker<LoginEvent, Never, EventDelivery.MainActor> =
///     EventBus.shared.on(LoginEvent.self).onMainActor()
/// ```
public enum EventDelivery {
    /// On the dispatching thread, before `dispatch` returns (the default).
    ///
    /// ```swift
    /// let maker: SubscriberMaker<LoginEvent, Never, EventDelivery.Synchronous> = EventBus.shared.on(LoginEvent.self)
    /// ```
    public enum Synchronous: NonisolatedDelivery {
        /// ``SubscriberMaker/monitor()`` makes it ``EventDelivery/Monitor``.
        public typealias Monitored = Monitor
    }

    /// On the dispatching thread, after every handler, unable to stop the dispatch
    /// (``SubscriberMaker/monitor()`` on a synchronous maker): offers `next`, not `handle`.
    ///
    /// ```swift
    /// let maker = EventBus.shared.on(LoginEvent.self).monitor()   // …, EventDelivery.Monitor>
    /// ```
    public enum Monitor: NonisolatedDelivery {
        /// Already a monitor.
        public typealias Monitored = Monitor
    }

    /// Asynchronously on a dispatch queue (``SubscriberMaker/atQueue(_:)``).
    ///
    /// ```swift
    /// let maker = EventBus.shared.on(LoginEvent.self).atQueue(.global())   // …, EventDelivery.Queued>
    /// ```
    public enum Queued: NonisolatedDelivery {
        /// A queued monitor stays queued.
        public typealias Monitored = Queued
    }

    /// On the main actor, to `@MainActor` handlers (``SubscriberMaker/onMainActor()``).
    ///
    /// ```swift
    /// let maker = EventBus.shared.on(LoginEvent.self).onMainActor()   // …, EventDelivery.MainActor>
    /// ```
    public enum MainActor: EventDeliveryStyle {
        /// A main-actor monitor stays on the main actor.
        public typealias Monitored = MainActor
    }
}

/// A delivery marker of ``EventDelivery``.
///
/// ```swift
/// func describe<D: EventDeliveryStyle>(_: SubscriberMaker<LoginEvent, Never, D>) -> String { "\(D.self)" }
/// ```
public protocol EventDeliveryStyle {
    /// The delivery of the same maker after ``SubscriberMaker/monitor()``: a synchronous maker
    /// becomes ``EventDelivery/Monitor`` (so it no longer offers `handle`); the others keep theirs.
    associatedtype Monitored: EventDeliveryStyle
}

/// A delivery marker whose handlers are nonisolated (synchronous or queued).
///
/// ```swift
/// func tap<D: NonisolatedDelivery>(_ maker: SubscriberMaker<LoginEvent, Never, D>) -> EventToken {
///     maker.next { print($0.userID) }
/// }
/// ```
public protocol NonisolatedDelivery: EventDeliveryStyle {}
