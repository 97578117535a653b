/// What a bus or a chain node did, as its tracers (``EventConfigurable/tracer``, and every one added
/// with ``EventConfigurable/addTracer(_:)``) receive it: one value per dispatch, subscription, end
/// of a subscription, dead event, handler error, dropped delivery and chain hop.
///
/// The tracer is called after the bus let go of its lock, on the thread that did the work (the
/// dispatching thread for a dispatch, the thread that disposed for an end, the handler's thread
/// for a handler error). Records are values: keep them, print them, count them.
///
/// ```swift
/// let bus = EventBus()
/// bus.tracer = { record in print(record) }
/// let token = bus.on(LoginEvent.self).next { _ in }
/// bus.dispatch(LoginEvent(userID: "42"))
/// token.dispose()
/// // subscribed #1 LoginEvent synchronous, normal, made at MyApp/Session.swift:3
/// // dispatched LoginEvent: 1 delivered, 0 enqueued
/// // ended #1 LoginEvent (disposed), made at MyApp/Session.swift:3
/// ```
public enum TraceRecord: Sendable, CustomStringConvertible {
    /// A dispatch ended (or was handed to the type's NotificationCenter bridge).
    case dispatched(Dispatched)
    /// A subscription was made.
    case subscribed(SubscriptionInfo)
    /// A subscription ended.
    case ended(Ended)
    /// A dispatch reached nobody (see ``DeadEvent``): every such dispatch is traced, whether or not
    /// ``EventBus/deadEventHandler`` is set.
    case deadEvent(DeadEvent)
    /// A throwing handler threw (see ``EventConfigurable/handlerErrorHandler``).
    case handlerError(HandlerError)
    /// A chain post passed a node (only a node's ``EventConfigurable/tracer`` receives these).
    case chainHop(ChainHop)
    /// A subscription's bound (``EventBuffering``) dropped a delivery, on the dispatching thread.
    case dropped(Dropped)

    /// A delivery a subscription's bound dropped: whose, under which bound, and how many the bus
    /// dropped in all so far.
    ///
    /// ```swift
    /// bus.tracer = { if case .dropped(let drop) = $0 { print(drop) } }
    /// // dropped LoginEvent for #4 (newest 1): 3 dropped on this bus
    /// ```
    public struct Dropped: Sendable, CustomStringConvertible {
        /// The event type.
        public let type: Any.Type
        /// The event type, as `String(reflecting:)` spells it (built when read).
        public var typeName: String { eventTypeName(type) }
        /// The subscription's token id.
        public let subscriptionID: UInt64
        /// The bound that dropped it.
        public let buffering: EventBuffering
        /// Deliveries the bus dropped in all, this one included (``EventBus/droppedDeliveryCount``).
        public let total: Int

        /// `dropped LoginEvent for #4 (newest 1): 3 dropped on this bus`.
        ///
        /// ```swift
        /// bus.tracer = { if case .dropped(let drop) = $0 { print(drop) } }
        /// ```
        public var description: String {
            "dropped \(typeName) for #\(subscriptionID) (\(buffering)): \(total) dropped on this bus"
        }
    }

    /// One dispatch: the event's type and key, and what it reached.
    public struct Dispatched: Sendable, CustomStringConvertible {
        /// The event type.
        public let type: Any.Type
        /// The event type, as `String(reflecting:)` spells it (built when read).
        public var typeName: String { eventTypeName(type) }
        /// The event's key (``Event/eventType``), `nil` for none.
        public let key: String?
        /// Handlers called on the dispatching thread (its supertypes' included).
        public let delivered: Int
        /// Deliveries enqueued on a queue or the main actor.
        public let enqueued: Int
        /// Whether a `handle` handler stopped it.
        public let isStopped: Bool
        /// How it was kept, for a sticky dispatch.
        public let sticky: StickyPolicy?

        /// `dispatched LoginEvent ["42"]: 2 delivered, 1 enqueued, stopped, sticky latest`.
        ///
        /// ```swift
        /// bus.tracer = { if case .dispatched(let d) = $0 { print(d) } }
        /// ```
        public var description: String {
            var line = "dispatched \(typeName)"
            if let key { line += " [\"\(key)\"]" }
            line += ": \(delivered) delivered, \(enqueued) enqueued"
            if isStopped { line += ", stopped" }
            if let sticky { line += ", sticky \(sticky)" }
            return line
        }
    }

    /// The end of a subscription, and why it ended.
    public struct Ended: Sendable, CustomStringConvertible {
        /// Why a subscription ended.
        public enum Reason: Sendable, Hashable, CustomStringConvertible {
            /// Its token's ``EventToken/dispose()`` was called.
            case disposed
            /// The ``DisposeBag`` holding its token was disposed or deallocated.
            case bagDisposed
            /// Its ``SubscriberMaker/freeWith(_:)`` owner was found deallocated.
            case ownerGone
            /// The bus was deallocated.
            case busGone

            /// `disposed`, `bag disposed`, `owner gone` or `bus gone`.
            ///
            /// ```swift
            /// print(TraceRecord.Ended.Reason.ownerGone)   // owner gone
            /// ```
            public var description: String {
                switch self {
                case .disposed: "disposed"
                case .bagDisposed: "bag disposed"
                case .ownerGone: "owner gone"
                case .busGone: "bus gone"
                }
            }
        }

        /// The subscription's token id.
        public let id: UInt64
        /// Its event type.
        public let type: Any.Type
        /// Its event type, as `String(reflecting:)` spells it (built when read).
        public var typeName: String { eventTypeName(type) }
        /// Why it ended.
        public let reason: Reason
        /// Where it was made, `Module/File.swift:42`.
        public let callSite: String

        /// `ended #3 LoginEvent (owner gone), made at MyApp/Profile.swift:30`.
        ///
        /// ```swift
        /// bus.tracer = { if case .ended(let end) = $0 { print(end) } }
        /// ```
        public var description: String { "ended #\(id) \(typeName) (\(reason)), made at \(callSite)" }
    }

    /// One line per record.
    ///
    /// ```swift
    /// bus.tracer = { print($0) }
    /// ```
    /// A post up an event chain at one node: what that node did with the event.
    ///
    /// ```swift
    /// let node = EventNode(name: "Root")
    /// node.tracer = { record in
    ///     if case .chainHop(let hop) = record { print(hop) }   // "MyApp.Liked at Root (depth 0): 0 delivered"
    /// }
    /// ```
    public struct ChainHop: Sendable, CustomStringConvertible {
        /// What happened to the event at the node.
        public enum Status: Sendable, Hashable, CustomStringConvertible {
            /// Delivered (to nobody, possibly), and passed on to the parent.
            case passed
            /// A `handle` subscriber stopped it here: only monitors above see it.
            case stopped
            /// An interceptor dropped it here: only monitors (here and above) see it.
            case dropped
            /// It arrived stopped or dropped: only this node's monitors saw it.
            case ended

            /// `passed`, `stopped`, `dropped` or `after its end`: what ``ChainHop``'s description
            /// appends when the event did not simply pass.
            ///
            /// ```swift
            /// print(TraceRecord.ChainHop.Status.stopped)   // stopped
            /// ```
            public var description: String {
                switch self {
                case .passed: "passed"
                case .stopped: "stopped"
                case .dropped: "dropped"
                case .ended: "after its end"
                }
            }
        }

        /// The event type.
        public let type: Any.Type
        /// The event type, as `String(reflecting:)` spells it (built when read).
        public var typeName: String { eventTypeName(type) }
        /// The node's name.
        public let node: String
        /// The node's place in the route: 0 for the posting node, 1 for its parent, and so on.
        public let depth: Int
        /// Handlers and monitors the node's delivery started or enqueued.
        public let delivered: Int
        /// What happened to the event here.
        public let status: Status

        /// `ChatMessage at Cell (depth 0): 2 delivered`, with `, stopped`, `, dropped` or
        /// `, after its end` when the event did not pass the node.
        ///
        /// ```swift
        /// cell.tracer = { if case .chainHop(let hop) = $0 { print(hop) } }
        /// // ChatMessage at Cell (depth 0): 2 delivered, stopped
        /// ```
        public var description: String {
            var line = "\(typeName) at \(node) (depth \(depth)): \(delivered) delivered"
            if status != .passed { line += ", \(status)" }
            return line
        }
    }

    /// One line per record, as the tracer prints it: `dispatched LoginEvent: 1 delivered, 0 enqueued`,
    /// `subscribed #1 …`, `ended #1 …`, `dead event …`, `handler error: …`, `chain hop …`,
    /// `dropped …`.
    ///
    /// ```swift
    /// bus.tracer = { record in print(record) }   // the description of each record
    /// ```
    public var description: String {
        switch self {
        case .dispatched(let dispatched): "\(dispatched)"
        case .subscribed(let info): "subscribed \(info)"
        case .ended(let ended): "\(ended)"
        case .deadEvent(let dead): "dead event \(dead.typeName)"
        case .handlerError(let error): "handler error: \(error)"
        case .chainHop(let hop): "chain hop \(hop)"
        case .dropped(let drop): "\(drop)"
        }
    }
}
