internal import EventBus
internal import Tracing

/// An event's destination in OpenTelemetry's messaging conventions: the event type, module-qualified
/// as `String(reflecting:)` spells it (the name metrics and logs use too), and its key when it has
/// one (`MyApp.LoginEvent`, `MyApp.ChatMessage/room-7`). Span names use the template
/// (`MyApp.ChatMessage/{key}`), so that keys never multiply span names.
struct MessagingDestination {
    /// The operation a span stands for.
    enum Operation: String {
        /// A dispatch (`messaging.operation.type` `send`).
        case publish
        /// The making of a remote envelope, whose context the envelope carries
        /// (`messaging.operation.type` `send`).
        case send
        /// A delivery that runs away from the dispatching thread, or a received remote event's
        /// dispatch.
        case process

        /// `messaging.operation.type`, from the conventions' list.
        var type: String { self == .process ? "process" : "send" }
    }

    /// `messaging.system`.
    static let system = "eventbus"

    let typeName: String
    let key: String?

    init(_ type: Any.Type, key: String?) {
        typeName = String(reflecting: type)
        self.key = key
    }

    /// `messaging.destination.name`.
    var name: String { key.map { "\(typeName)/\($0)" } ?? typeName }
    /// `messaging.destination.template`, for a keyed event.
    var template: String? { key == nil ? nil : "\(typeName)/{key}" }

    /// `publish MyApp.LoginEvent`, `send MyApp.LoginEvent`, `process MyApp.ChatMessage/{key}`.
    func spanName(_ operation: Operation) -> String {
        "\(operation.rawValue) \(template ?? typeName)"
    }

    /// Sets the messaging attributes of `span`; for a delivery, where it ran and its subscription.
    func describe(_ span: some Span, _ operation: Operation, _ delivery: EventContextDelivery? = nil) {
        span.attributes["messaging.system"] = Self.system
        span.attributes["messaging.operation.name"] = operation.rawValue
        span.attributes["messaging.operation.type"] = operation.type
        span.attributes["messaging.destination.name"] = name
        if let template { span.attributes["messaging.destination.template"] = template }
        guard let delivery else { return }
        span.attributes["messaging.eventbus.delivery"] = delivery.hop.description
        if let id = delivery.subscriptionID { span.attributes["messaging.eventbus.subscription.id"] = Int(id) }
    }
}
