/// An ``EventContextPropagator`` for a context kept in a task-local: the handlers that run elsewhere
/// see the dispatcher's value of it. Optionally carried across processes under one header.
///
/// Captures `taskLocal.get()` on the dispatching thread and binds it with `withValue` around the
/// delivery. The task-local may be optional or not:
///
/// - `TaskLocal<Value?>`: `nil` carries nothing; a delivery whose dispatcher had `nil` runs with
///   `nil` (a stream's loop body too, whatever its consuming task has bound).
/// - `TaskLocal<Value>`: the value is always carried, the task-local's default when the dispatcher
///   bound none, so a handler sees exactly what the dispatcher saw; a stream's event dispatched
///   before the propagator was set runs with the default.
///
/// With a `header`, a remote bridge carries the value as that header's text
/// (`String(describing:)`) and the receiver parses it back with `Value(_:)`
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
    /// The task-local, with or without `nil` for "no context".
    private enum Storage: Sendable {
        /// `nil` is "no context".
        case optional(TaskLocal<Value?>)
        /// Never empty: its default is "no context".
        case required(TaskLocal<Value>)
    }

    private let taskLocal: Storage
    private let header: String?
    private let parse: @Sendable (String) -> Value?

    /// A propagator of an optional `taskLocal`'s value, within this process only.
    ///
    /// ```swift
    /// bus.contextPropagator = TaskLocalContextPropagator(RequestID.$current)
    /// ```
    public init(_ taskLocal: TaskLocal<Value?>) {
        self.taskLocal = .optional(taskLocal)
        header = nil
        parse = { _ in nil }
    }

    /// A propagator of a non-optional `taskLocal`'s value (its default where none is bound), within
    /// this process only.
    ///
    /// ```swift
    /// enum Tenant {
    ///     @TaskLocal static var id = "public"
    /// }
    /// bus.contextPropagator = TaskLocalContextPropagator(Tenant.$id)
    /// ```
    public init(_ taskLocal: TaskLocal<Value>) {
        self.taskLocal = .required(taskLocal)
        header = nil
        parse = { _ in nil }
    }

    /// A propagator of an optional `taskLocal`'s value, carried across processes as the text of
    /// `header`.
    ///
    /// ```swift
    /// bus.contextPropagator = TaskLocalContextPropagator(RequestID.$current, header: "request-id")
    /// ```
    public init(_ taskLocal: TaskLocal<Value?>, header: String) where Value: LosslessStringConvertible {
        self.taskLocal = .optional(taskLocal)
        self.header = header
        parse = { Value($0) }
    }

    /// A propagator of a non-optional `taskLocal`'s value (its default where none is bound),
    /// carried across processes as the text of `header`.
    ///
    /// ```swift
    /// bus.contextPropagator = TaskLocalContextPropagator(Tenant.$id, header: "tenant")
    /// ```
    public init(_ taskLocal: TaskLocal<Value>, header: String) where Value: LosslessStringConvertible {
        self.taskLocal = .required(taskLocal)
        self.header = header
        parse = { Value($0) }
    }

    /// The task-local's value on the dispatching thread: `nil` if an optional one has none; a
    /// non-optional one's default if none is bound.
    ///
    /// ```swift
    /// let captured = TaskLocalContextPropagator(RequestID.$current).capture()
    /// ```
    public func capture() -> (any Sendable)? {
        switch taskLocal {
        case .optional(let taskLocal): taskLocal.get()
        case .required(let taskLocal): taskLocal.get()
        }
    }

    /// Runs `body` with the task-local bound to `context` (a context that is not a `Value` binds
    /// `nil` to an optional task-local, and nothing to a non-optional one).
    ///
    /// ```swift
    /// let delivery = EventContextDelivery(eventType: LoginEvent.self, key: nil, hop: .mainActor, subscriptionID: 1)
    /// TaskLocalContextPropagator(RequestID.$current).restore("req-7", for: delivery) { print(RequestID.current!) }
    /// ```
    public func restore(_ context: any Sendable, for delivery: EventContextDelivery, _ body: () -> Void) {
        switch taskLocal {
        case .optional(let taskLocal):
            taskLocal.withValue(context as? Value, operation: body)
        case .required(let taskLocal):
            guard let value = context as? Value else { return body() }
            taskLocal.withValue(value, operation: body)
        }
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
        switch taskLocal {
        case .optional(let taskLocal):
            await taskLocal.withValue(context as? Value, operation: body)
        case .required(let taskLocal):
            guard let value = context as? Value else { return await body() }
            await taskLocal.withValue(value, operation: body)
        }
    }

    /// Runs `body` with the task-local bound to `nil` (optional) or to its default (non-optional),
    /// on `isolation`: a stream's loop body for an event dispatched with no context.
    ///
    /// A non-optional task-local's default is read in a detached task, which binds none: this
    /// happens only for an event dispatched while no propagator was set, since the non-optional
    /// form always captures a value.
    ///
    /// ```swift
    /// let delivery = EventContextDelivery(eventType: LoginEvent.self, key: nil, hop: .stream, subscriptionID: 1)
    /// await TaskLocalContextPropagator(RequestID.$current).withoutContext(for: delivery, isolation: nil) {
    ///     print(RequestID.current ?? "-")   // -
    /// }
    /// ```
    public func withoutContext(
        for delivery: EventContextDelivery, isolation: isolated (any Actor)?, _ body: () async -> Void
    ) async {
        switch taskLocal {
        case .optional(let taskLocal):
            await taskLocal.withValue(nil, operation: body)
        case .required(let taskLocal):
            let defaultValue = await Task.detached { taskLocal.get() }.value
            await taskLocal.withValue(defaultValue, operation: body)
        }
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
