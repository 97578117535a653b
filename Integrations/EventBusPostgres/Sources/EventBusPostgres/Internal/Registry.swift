import EventBus
import Foundation

/// The registered event types, by wire name and by type. Guarded by the bridge's lock; its
/// closures run after the lock is released.
struct Registry {
    /// Decodes an envelope's payload as the registered type and dispatches it on the bus queue.
    typealias Deliver = @Sendable (Data, EventBus) throws -> Void

    private var byName: [String: (type: ObjectIdentifier, deliver: Deliver)] = [:]
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
            { data, bus in
                let event = try JSONDecoder().decode(Envelope.Payload<E>.self, from: data).p
                bus.dispatchOnBusQueue(event)
            }
        )
        return nil
    }

    func wireName<E: Event>(of type: E.Type) -> String? {
        byType[ObjectIdentifier(type)]
    }

    func deliver(forWireName name: String) -> Deliver? {
        byName[name]?.deliver
    }
}
