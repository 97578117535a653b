/// What an ``EventContextPropagator`` is restoring a context for: the event, where it is delivered,
/// and to which subscription. A value made only when a propagator is set.
///
/// ```swift
/// func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {
///     print(delivery.eventType, delivery.key ?? "-", delivery.hop)   // LoginEvent - queue "work"
///     RequestID.$current.withValue(context as? String, operation: body)
/// }
/// ```
public struct EventContextDelivery: Sendable, CustomStringConvertible {
    /// The hop a delivery makes away from the dispatching thread.
    public enum Hop: Sendable, Hashable, CustomStringConvertible {
        /// To an ``SubscriberMaker/atQueue(_:)`` subscription's queue, with this label.
        case queue(label: String)
        /// To a main-actor subscription (``SubscriberMaker/onMainActor()``), on the main queue.
        case mainActor
        /// To an actor-isolated subscription (``SubscriberMaker/isolated(to:)``), on its actor, of
        /// this type (as `String(reflecting:)` spells it).
        case actor(typeName: String)
        /// Into an ``EventStream``'s consuming task (``EventStream/consume(isolation:_:)``).
        case stream
        /// To the main queue, where a ``MainActorEventNode/post(_:)`` made elsewhere runs; the
        /// node's name.
        case chainPost(node: String)
        /// To the bus's queue (``EventBus/dispatchOnBusQueue(_:)``) or the main queue
        /// (``EventBus/dispatchOnMain(_:)``), where the dispatch itself runs.
        case deferredDispatch
        /// Across processes, under this wire name: a remote bridge (`EventBusRemote`) received the
        /// event and dispatches it with the publisher's context (see
        /// ``EventContextPropagator/context(fromHeaders:)``), or is making its envelope
        /// (``EventContextPropagator/send(_:for:_:)``).
        case remote(wireName: String)

        /// `queue "label"`, `main actor`, `actor MyApp.Counter`, `stream`, `chain post at "node"`, `deferred dispatch` or
        /// `remote "wire.name"`.
        ///
        /// ```swift
        /// print(EventContextDelivery.Hop.queue(label: "work"))   // queue "work"
        /// ```
        public var description: String {
            switch self {
            case .queue(let label): "queue \"\(label)\""
            case .mainActor: "main actor"
            case .actor(let typeName): "actor \(typeName)"
            case .stream: "stream"
            case .chainPost(let node): "chain post at \"\(node)\""
            case .deferredDispatch: "deferred dispatch"
            case .remote(let wireName): "remote \"\(wireName)\""
            }
        }
    }

    /// The type of the event delivered (a supertype, for a delivery as one).
    public let eventType: Any.Type
    /// The event's ``Event/eventType`` key, `nil` for none.
    public let key: String?
    /// Where the delivery runs.
    public let hop: Hop
    /// The subscription's token ``EventToken/id``; `nil` for a hop that is not one subscription's
    /// (a chain post, a deferred dispatch).
    public let subscriptionID: UInt64?

    /// Describes a delivery (for propagators' own tests; the bus makes these).
    ///
    /// ```swift
    /// let delivery = EventContextDelivery(eventType: LoginEvent.self, key: nil, hop: .mainActor, subscriptionID: 1)
    /// ```
    public init(eventType: Any.Type, key: String?, hop: Hop, subscriptionID: UInt64?) {
        self.eventType = eventType
        self.key = key
        self.hop = hop
        self.subscriptionID = subscriptionID
    }

    /// `LoginEvent ["42"] via queue "work"`.
    ///
    /// ```swift
    /// print(EventContextDelivery(eventType: LoginEvent.self, key: "42", hop: .stream, subscriptionID: 3))
    /// ```
    public var description: String {
        "\(eventType)\(key.map { " [\"\($0)\"]" } ?? "") via \(hop)"
    }

    /// The delivery of `event`, for which `key` is computed only when a propagator asks (a cast).
    init<E>(_ event: E, hop: Hop, subscriptionID: UInt64?) {
        self.init(
            eventType: E.self, key: (event as? any Event)?.routingKey, hop: hop, subscriptionID: subscriptionID)
    }
}
