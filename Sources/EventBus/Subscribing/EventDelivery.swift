/// Where a maker's handler runs: the `Delivery` parameter of ``SubscriberMaker``.
///
/// You never create these. Each style declares, by the protocols it conforms to, what its maker
/// offers, and the finishers are written once against those declarations:
///
/// | Style | Handlers (its protocol) | `handle` (``StoppingDelivery``) | ``SubscriberMaker/buffering(_:)`` (``EnqueuingDelivery``) | After `monitor()` |
/// |---|---|---|---|---|
/// | ``Synchronous`` | nonisolated (``NonisolatedDelivery``) | yes | no | ``Monitor`` |
/// | ``Monitor`` | nonisolated | no | no | ``Monitor`` |
/// | ``Queued`` | nonisolated | no | yes | ``Queued`` |
/// | ``MainActor`` | `@MainActor` (``MainActorDelivery``) | no | yes | ``MainActor`` |
/// | ``MainActorChain`` | `@MainActor` | yes | no | ``MainActor`` |
/// | ``Isolated`` | isolated to the owning actor | no | yes | ``Isolated`` |
///
/// A style that cannot stop says why in `SubscriberMaker+Unavailable.swift` (the compiler's
/// message when `handle` is written after it).
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
    public enum Synchronous: NonisolatedDelivery, StoppingDelivery {
        /// ``SubscriberMaker/monitor()`` makes it ``EventDelivery/Monitor``.
        ///
        /// ```swift
        /// let maker: SubscriberMaker<LoginEvent, Never, EventDelivery.Monitor> =
        ///     EventBus.shared.on(LoginEvent.self).monitor()
        /// ```
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
        ///
        /// ```swift
        /// let maker: SubscriberMaker<LoginEvent, Never, EventDelivery.Monitor> =
        ///     EventBus.shared.on(LoginEvent.self).monitor().monitor()
        /// ```
        public typealias Monitored = Monitor
    }

    /// Asynchronously on a dispatch queue (``SubscriberMaker/atQueue(_:)``).
    ///
    /// ```swift
    /// let maker = EventBus.shared.on(LoginEvent.self).atQueue(.global())   // …, EventDelivery.Queued>
    /// ```
    public enum Queued: NonisolatedDelivery, EnqueuingDelivery {
        /// A queued monitor stays queued.
        ///
        /// ```swift
        /// let maker: SubscriberMaker<LoginEvent, Never, EventDelivery.Queued> =
        ///     EventBus.shared.on(LoginEvent.self).atQueue(.global()).monitor()
        /// ```
        public typealias Monitored = Queued
    }

    /// On the main actor, to `@MainActor` handlers (``SubscriberMaker/onMainActor()``).
    ///
    /// ```swift
    /// let maker = EventBus.shared.on(LoginEvent.self).onMainActor()   // …, EventDelivery.MainActor>
    /// ```
    public enum MainActor: MainActorDelivery, EnqueuingDelivery {
        /// A main-actor monitor stays on the main actor.
        ///
        /// ```swift
        /// let maker: SubscriberMaker<LoginEvent, Never, EventDelivery.MainActor> =
        ///     EventBus.shared.on(LoginEvent.self).onMainActor().monitor()
        /// ```
        public typealias Monitored = MainActor
    }

    /// On the owner, an actor, to handlers isolated to it (``SubscriberMaker/isolated(to:)``): in
    /// dispatch order, after the dispatch. Offers `next { actor, event in }`, not `handle`.
    ///
    /// ```swift
    /// actor Tally { var count = 0 }
    /// let tally = Tally()
    /// let maker = EventBus.shared.on(LoginEvent.self).isolated(to: tally)   // …, Tally, EventDelivery.Isolated>
    /// ```
    public enum Isolated: EnqueuingDelivery {
        /// An actor-isolated monitor stays on its actor.
        ///
        /// ```swift
        /// actor Tally {}
        /// let tally = Tally()
        /// let maker: SubscriberMaker<LoginEvent, Tally, EventDelivery.Isolated> =
        ///     EventBus.shared.on(LoginEvent.self).monitor().isolated(to: tally)
        /// ```
        public typealias Monitored = Isolated
    }

    /// On the main actor, within a ``MainActorEventNode``'s post, to `@MainActor` handlers that
    /// may stop it (``MainActorEventNode/on(_:)``): offers `next` and `handle`.
    ///
    /// A main-actor node's post always runs on the main queue, so its handlers are called
    /// synchronously, in the post, and a `handle` can decide for the nodes above. The bus's
    /// ``EventDelivery/MainActor`` makers cannot: a dispatch from another thread enqueues them.
    ///
    /// ```swift
    /// let maker = MainActorEventNode(name: "List").on(Liked.self)   // …, EventDelivery.MainActorChain>
    /// ```
    public enum MainActorChain: MainActorDelivery, StoppingDelivery {
        /// ``SubscriberMaker/monitor()`` makes it ``EventDelivery/MainActor``: a monitor cannot
        /// stop.
        ///
        /// ```swift
        /// @MainActor func monitorOf(_ node: MainActorEventNode) -> SubscriberMaker<LoginEvent, Never, EventDelivery.MainActor> {
        ///     node.on(LoginEvent.self).monitor()
        /// }
        /// ```
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
    ///
    /// ```swift
    /// func monitored<D: EventDeliveryStyle>(_ maker: SubscriberMaker<LoginEvent, Never, D>) -> SubscriberMaker<LoginEvent, Never, D.Monitored> {
    ///     maker.monitor()
    /// }
    /// ```
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

/// A delivery marker whose handlers are `@MainActor`: ``EventDelivery/MainActor`` (the bus's
/// ``SubscriberMaker/onMainActor()``) and ``EventDelivery/MainActorChain`` (a
/// ``MainActorEventNode``'s makers). Both offer the same `next`.
///
/// ```swift
/// @MainActor final class Counter { var count = 0 }
/// func count<D: MainActorDelivery>(_ maker: SubscriberMaker<LoginEvent, Never, D>, into counter: Counter) -> EventToken {
///     maker.next { _ in counter.count += 1 }   // @MainActor
/// }
/// ```
public protocol MainActorDelivery: EventDeliveryStyle {}

/// A delivery marker whose deliveries may leave the dispatching thread, through the subscription's
/// mailbox: ``EventDelivery/Queued``, ``EventDelivery/MainActor`` and ``EventDelivery/Isolated``.
/// Their makers offer ``SubscriberMaker/buffering(_:)``.
///
/// ```swift
/// func latestOnly<D: EnqueuingDelivery>(_ maker: SubscriberMaker<LoginEvent, Never, D>) -> SubscriberMaker<LoginEvent, Never, D> {
///     maker.buffering(.bufferingNewest(1))
/// }
/// ```
public protocol EnqueuingDelivery: EventDeliveryStyle {}

/// A delivery marker whose handlers run within the dispatch (or a main-actor node's post), so they
/// can stop it: ``EventDelivery/Synchronous`` and ``EventDelivery/MainActorChain``. Their makers
/// offer `handle`; on every other style `handle` is a compile error that says why.
///
/// ```swift
/// func guardBack<D: NonisolatedDelivery & StoppingDelivery>(_ maker: SubscriberMaker<BackTapped, Never, D>) -> EventToken {
///     maker.handle { _ in .stop }
/// }
/// ```
public protocol StoppingDelivery: EventDeliveryStyle {}
