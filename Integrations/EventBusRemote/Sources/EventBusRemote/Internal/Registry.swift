import EventBus
import Foundation

/// The registered event types, by wire name and by type. Guarded by the bridge's lock; its
/// closures run after the lock is released.
struct Registry {
    /// Decodes an envelope's payload as the registered type; the result dispatches it.
    typealias Decode = @Sendable (Data) throws -> Decoded

    /// A decoded event, ready to be dispatched on a bus's queue: its type and key (what a context
    /// propagator is told), and its dispatch.
    struct Decoded {
        let type: Any.Type
        let key: String?
        let dispatch: @Sendable (EventBus) -> Void
    }

    private var byName: [String: (type: ObjectIdentifier, decode: Decode)] = [:]
    private var byType: [ObjectIdentifier: String] = [:]

    /// Registers `E` as `wireName`; returns why not, or `nil`.
    mutating func add<E: Event & Codable>(_ type: E.Type, as wireName: String) -> String? {
        let id = ObjectIdentifier(type)
        if let existing = byType[id] {
            return existing == wireName ? nil : "\(type) is already registered as \(existing.debugDescription)"
        }
        if byName[wireName] != nil { return "the name is already registered for another type" }
        byType[id] = wireName
        byName[wireName] = (
            id,
            { data in
                let event = try JSONDecoder().decode(Envelope.Payload<E>.self, from: data).p
                return Decoded(type: E.self, key: event._routingKey) { bus in bus.dispatchOnBusQueue(event) }
            }
        )
        return nil
    }

    func wireName<E: Event>(of type: E.Type) -> String? {
        byType[ObjectIdentifier(type)]
    }

    func decoder(forWireName name: String) -> Decode? {
        byName[name]?.decode
    }
}
