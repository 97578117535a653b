/// An ``EventContextPropagator`` for a context kept in a task-local: the handlers that run elsewhere
/// see the dispatcher's value of it. Optionally carried across processes under one header.
///
/// Captures `taskLocal.get()` on the dispatching thread (`nil` carries nothing) and binds it with
/// `withValue` around the delivery. With a `header`, a remote bridge carries the value as that
/// header's text (`String(describing:)`) and the receiver parses it back with `Value(_:)`
/// (`LosslessStringConvertible`): text that does not parse carries nothing.
///
/// ```swift
/// enum RequestID {
///     @TaskLocal static var current: String?
/// }
/// let bus = EventBus()
/// bus.contextPropagator = TaskLocalContextPropagator(RequestID.$current, header: "request-id")
/// ```
public struct TaskLocalContextPropagator<Value: Sendable>: EventContextPropagator {
    private let taskLocal: TaskLocal<Value?>
    private let header: String?
    private let parse: @Sendable (String) -> Value?

    /// A propagator of `taskLocal`'s value, within this process only.
    ///
    /// ```swift
    /// bus.contextPropagator = TaskLocalContextPropagator(RequestID.$current)
    /// ```
    public init(_ taskLocal: TaskLocal<Value?>) {
        self.taskLocal = taskLocal
        header = nil
        parse = { _ in nil }
    }

    /// A propagator of `taskLocal`'s value, carried across processes as the text of `header`.
    ///
    /// ```swift
    /// bus.contextPropagator = TaskLocalContextPropagator(RequestID.$current, header: "request-id")
    /// ```
    public init(_ taskLocal: TaskLocal<Value?>, header: String) where Value: LosslessStringConvertible {
        self.taskLocal = taskLocal
        self.header = header
        parse = { Value($0) }
    }

    /// The task-local's value on the dispatching thread, `nil` if it has none.
    ///
    /// ```swift
    /// let captured = TaskLocalContextPropagator(RequestID.$current).capture()
    /// ```
    public func capture() -> (any Sendable)? {
        taskLocal.get()
    }

    /// Runs `body` with the task-local bound to `context`.
    ///
    /// ```swift
    /// let delivery = EventContextDelivery(eventType: LoginEvent.self, key: nil, hop: .mainActor, subscriptionID: 1)
    /// TaskLocalContextPropagator(RequestID.$current).restore("req-7", for: delivery) { print(RequestID.current!) }
    /// ```
    public func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {
        taskLocal.withValue(context as? Value, operation: body)
    }

    /// Runs `body` with the task-local bound to `context`, on `isolation`.
    ///
    /// ```swift
    /// let delivery = EventContextDelivery(eventType: LoginEvent.self, key: nil, hop: .stream, subscriptionID: 1)
    /// await TaskLocalContextPropagator(RequestID.$current).restore("req-7", for: delivery, isolation: nil) {}
    /// ```
    public func restore(
        _ context: any Sendable, for delivery: EventContextDelivery, isolation: isolated (any Actor)?,
        _ body: () async -> Void
    ) async {
        await taskLocal.withValue(context as? Value, operation: body)
    }

    /// `[header: text of the value]` with a header, else none.
    ///
    /// ```swift
    /// let headers = TaskLocalContextPropagator(RequestID.$current, header: "request-id").headers(of: "req-7")
    /// ```
    public func headers(of context: any Sendable) -> [String: String] {
        guard let header, let value = context as? Value else { return [:] }
        return [header: String(describing: value)]
    }

    /// The value the header's text parses to, `nil` without one.
    ///
    /// ```swift
    /// let id = TaskLocalContextPropagator(RequestID.$current, header: "request-id")
    ///     .context(fromHeaders: ["request-id": "req-7"])
    /// ```
    public func context(fromHeaders headers: [String: String]) -> (any Sendable)? {
        guard let header, let text = headers[header] else { return nil }
        return parse(text)
    }
}
