// `EventBus.Event` and its siblings: the module and its main class share the name `EventBus`, so in
// an app that declares its own `Event` (or `EventToken`, …) a qualified `EventBus.Event` is looked up
// in the class, not in the module. These nested aliases make the qualified names resolve. The
// generic `SubscriberMaker` and `EventStream` have none: an app rarely spells them, and a generic
// alias would have to repeat their constraints.
//
// Swift 6.3's module selectors (SE-0491, no flag needed) name any of the module's declarations
// without an alias: `EventBus::Event`, `EventBus::EventBus`. The aliases stay while the package
// supports Swift 6.2 (its tools version), which has no selectors; `CompileChecks/QualifiedNames`
// checks both spellings. JSON events have their own module, whose name qualifies them
// (`EventBusJSON.JSONValue`).

extension EventBus {
    /// The ``/EventBus/Event`` protocol, under a name that works where `Event` alone means another
    /// type: `struct Ping: EventBus.Event {}` in an app that has an `Event` of its own.
    ///
    /// Handlers and delivery are those of ``/EventBus/Event``; this is the same protocol.
    ///
    /// ```swift
    /// struct Event {}                       // the app's own type
    /// struct Ping: EventBus.Event {}        // the bus's protocol
    /// EventBus.shared.dispatch(Ping())
    /// ```
    public typealias Event = _EventBusModuleNames._Event

    /// The ``/EventBus/EventRoutingKey`` protocol, as `EventBus.EventRoutingKey`.
    ///
    /// ```swift
    /// enum Room: String, EventBus.EventRoutingKey { case lobby }
    /// ```
    public typealias EventRoutingKey = _EventBusModuleNames._EventRoutingKey

    /// The ``/EventBus/EventSubscribing`` protocol, as `EventBus.EventSubscribing`.
    ///
    /// Its subscriptions end when the instance is deallocated, as with the unqualified name.
    ///
    /// ```swift
    /// final class Badge: EventBus.EventSubscribing, Sendable {}
    /// ```
    public typealias EventSubscribing = _EventBusModuleNames._EventSubscribing

    /// The ``/EventBus/EventToken`` type, as `EventBus.EventToken`: `dispose()` ends the
    /// subscription, from any thread.
    ///
    /// ```swift
    /// var tokens: [EventBus.EventToken] = []
    /// ```
    public typealias EventToken = _EventBusModuleNames._EventToken

    /// The ``/EventBus/DisposeBag`` type, as `EventBus.DisposeBag`: it disposes its tokens when it
    /// is deallocated or emptied.
    ///
    /// ```swift
    /// let bag = EventBus.DisposeBag()
    /// ```
    public typealias DisposeBag = _EventBusModuleNames._DisposeBag

    /// The ``/EventBus/EventDelivery`` markers, as `EventBus.EventDelivery`.
    ///
    /// ```swift
    /// let maker = EventBus.shared.on(LoginEvent.self).onMainActor()   // …, EventBus.EventDelivery.MainActor>
    /// ```
    public typealias EventDelivery = _EventBusModuleNames._EventDelivery

    /// The ``/EventBus/EventDeliveryStyle`` protocol, as `EventBus.EventDeliveryStyle`.
    ///
    /// ```swift
    /// func describe<D: EventBus.EventDeliveryStyle>(_: D.Type) -> String { "\(D.self)" }
    /// ```
    public typealias EventDeliveryStyle = _EventBusModuleNames._EventDeliveryStyle

    /// The ``/EventBus/NonisolatedDelivery`` protocol, as `EventBus.NonisolatedDelivery`.
    ///
    /// ```swift
    /// func isNonisolated<D: EventBus.NonisolatedDelivery>(_: D.Type) -> Bool { true }
    /// ```
    public typealias NonisolatedDelivery = _EventBusModuleNames._NonisolatedDelivery

    /// The ``/EventBus/MainActorDelivery`` protocol, as `EventBus.MainActorDelivery`.
    ///
    /// ```swift
    /// func isOnMainActor<D: EventBus.MainActorDelivery>(_: D.Type) -> Bool { true }
    /// ```
    public typealias MainActorDelivery = _EventBusModuleNames._MainActorDelivery

    /// The ``/EventBus/EventPriority`` enum, as `EventBus.EventPriority`.
    ///
    /// ```swift
    /// let priority: EventBus.EventPriority = .high
    /// ```
    public typealias EventPriority = _EventBusModuleNames._EventPriority

    /// The ``/EventBus/EventPropagation`` enum, as `EventBus.EventPropagation`.
    ///
    /// ```swift
    /// let decision: EventBus.EventPropagation = .stop
    /// ```
    public typealias EventPropagation = _EventBusModuleNames._EventPropagation

    /// The ``/EventBus/StickyPolicy`` struct, as `EventBus.StickyPolicy`.
    ///
    /// ```swift
    /// let policy: EventBus.StickyPolicy = .latest
    /// ```
    public typealias StickyPolicy = _EventBusModuleNames._StickyPolicy

    /// The ``/EventBus/ManualEventClock`` class, as `EventBus.ManualEventClock`.
    ///
    /// ```swift
    /// let clock = EventBus.ManualEventClock()
    /// ```
    public typealias ManualEventClock = _EventBusModuleNames._ManualEventClock

    /// The ``/EventBus/DeadEvent`` struct, as `EventBus.DeadEvent`.
    ///
    /// ```swift
    /// func log(_ dead: EventBus.DeadEvent) { print(dead.event) }
    /// ```
    public typealias DeadEvent = _EventBusModuleNames._DeadEvent

    /// The ``/EventBus/HandlerError`` struct, as `EventBus.HandlerError`.
    ///
    /// ```swift
    /// func log(_ failure: EventBus.HandlerError) { print(failure) }
    /// ```
    public typealias HandlerError = _EventBusModuleNames._HandlerError

    /// The ``/EventBus/DeliveredAsSupertypes`` protocol, as `EventBus.DeliveredAsSupertypes`.
    ///
    /// ```swift
    /// func isDeliveredAsSupertypes<E: EventBus.DeliveredAsSupertypes>(_: E.Type) -> Bool { true }
    /// ```
    public typealias DeliveredAsSupertypes = _EventBusModuleNames._DeliveredAsSupertypes
}

/// The module's top-level names, reachable from inside `extension EventBus` (where `Event` alone
/// would be the nested alias itself). Not API: use the names without the underscore.
public enum _EventBusModuleNames {
    public typealias _Event = Event
    public typealias _EventRoutingKey = EventRoutingKey
    public typealias _EventSubscribing = EventSubscribing
    public typealias _EventToken = EventToken
    public typealias _DisposeBag = DisposeBag
    public typealias _EventDelivery = EventDelivery
    public typealias _EventDeliveryStyle = EventDeliveryStyle
    public typealias _NonisolatedDelivery = NonisolatedDelivery
    public typealias _MainActorDelivery = MainActorDelivery
    public typealias _EventPriority = EventPriority
    public typealias _EventPropagation = EventPropagation
    public typealias _StickyPolicy = StickyPolicy
    public typealias _ManualEventClock = ManualEventClock
    public typealias _DeadEvent = DeadEvent
    public typealias _HandlerError = HandlerError
    public typealias _DeliveredAsSupertypes = DeliveredAsSupertypes
}
