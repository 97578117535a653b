/// The settings of a bus, or of the bus behind an event chain's node: what the members of
/// ``EventConfigurable`` (``EventConfigurable/tracer``, ``EventConfigurable/addTracer(_:)``,
/// ``EventConfigurable/contextPropagator``, ``EventConfigurable/handlerErrorHandler``) read and
/// write.
///
/// Opaque: you get one from ``EventBus``, ``EventNode`` or ``MainActorEventNode`` (their
/// `configuration`), never make one. A type of yours that wraps one of those can conform to
/// ``EventConfigurable`` by returning its configuration, and then offers the same settings. Holding
/// it keeps the bus alive; it is `Sendable` and its settings may be changed from any thread.
///
/// ```swift
/// final class CartModule: EventConfigurable {
///     let bus = EventBus()
///     var configuration: EventConfiguration { bus.configuration }
/// }
/// let cart = CartModule()
/// cart.handlerErrorHandler = { failure in print(failure) }   // the module's bus's handler
/// ```
public struct EventConfiguration: Sendable {
    /// The bus whose settings these are.
    let bus: EventBus

    /// The settings of `bus`.
    init(_ bus: EventBus) {
        self.bus = bus
    }
}
