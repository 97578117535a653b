import EventBus
import NIOConcurrencyHelpers
import PostgresNIO

/// A durable consumer's transactional handlers (`PostgresEventBridge.process(_:_:)`), one per event
/// type. Thread-safe: registered from any thread, read by the receiver; the handlers run after the
/// lock is released.
final class Processors: Sendable {
    /// A handler, taking the event as its registered type's value.
    typealias Handler = @Sendable (any Event, PostgresConnection) async throws -> Void

    private let handlers = NIOLockedValueBox<[ObjectIdentifier: Handler]>([:])

    /// Whether no handler is registered: the consumer receives as durable delivery always did.
    var isEmpty: Bool { handlers.withLockedValue { $0.isEmpty } }

    /// Registers `handler` for events of type `E`; `false` (nothing changed) if `E` has one.
    func add<E: Event>(_ type: E.Type, _ handler: @escaping @Sendable (E, PostgresConnection) async throws -> Void)
        -> Bool
    {
        let erased: Handler = { event, connection in
            // Only called with an `E`: `handler(for:)` looks the handler up by the event's type.
            guard let event = event as? E else { return }
            try await handler(event, connection)
        }
        return handlers.withLockedValue { handlers in
            guard handlers[ObjectIdentifier(type)] == nil else { return false }
            handlers[ObjectIdentifier(type)] = erased
            return true
        }
    }

    /// The handler of `event`'s type, if one is registered.
    func handler(for event: any Event) -> Handler? {
        let id = ObjectIdentifier(type(of: event))
        return handlers.withLockedValue { $0[id] }
    }
}
