@_spi(Integrations) import EventBus
import Foundation

/// The registered event types, by wire name and by type, each with its event version, the older
/// versions it upcasts and the version it publishes. Guarded by the bridge's lock; its closures run
/// after the lock is released.
///
/// On the wire, version 1 of a wire name is the name alone (what ``RemoteBridge/register(_:as:)``
/// has always written) and version *k* ≥ 2 is `name@k`: a name an instance that does not know
/// versions has not registered (`@` is not allowed in a name), so it never decodes a newer shape
/// as an older type.
struct Registry {
    /// Decodes an envelope's payload as the registered type; the result dispatches it.
    typealias Decode = @Sendable (Data) throws -> Decoded

    /// A decoded event, ready to be dispatched on a bus's queue: its value (for a transport's own
    /// handlers), and its dispatch (with the context its envelope carried, if any, restored around
    /// it as the remote hop under `wireName`).
    struct Decoded {
        let event: any Event
        let dispatch: @Sendable (_ bus: EventBus, _ context: (any Sendable)?, _ wireName: String) -> Void

        init<E: Event>(_ event: E) {
            self.event = event
            dispatch = { bus, context, wireName in
                guard let context else { return bus.dispatchOnBusQueue(event) }
                bus.dispatchOnBusQueue(event, restoring: context, hop: .remote(wireName: wireName))
            }
        }
    }

    /// What an envelope's wire name is to this instance.
    enum Lookup {
        /// A version it reads (its own or one it upcasts).
        case decode(Decode)
        /// A name it has not registered at all: not for this instance.
        case unknown
        /// A version of a registered name it cannot read (newer than its own, or older without an
        /// upcaster): another instance's version may read it.
        case unreadable(reason: String)
    }

    /// How a registered type is published: the wire name as it goes out (with its version), and
    /// how its payload is encoded when it publishes an older version (`nil`: the event itself).
    struct Publishing: Sendable {
        let statedName: String
        let encode: (@Sendable (Any) throws -> Data)?
    }

    private struct Entry {
        let type: ObjectIdentifier
        let version: Int
        var decoders: [Int: Decode]
    }

    private var byName: [String: Entry] = [:]
    private var byType: [ObjectIdentifier: (name: String, version: Int, publishing: Publishing)] = [:]

    /// The name `name` version `version` goes out as: `name` for version 1, `name@version` after.
    static func statedName(_ name: String, version: Int) -> String {
        version == 1 ? name : "\(name)@\(version)"
    }

    /// The name and version an envelope states (`order.shipped@2` is version 2 of
    /// `order.shipped`); `nil` for a version suffix that is not 2 or more without leading zeros.
    static func parse(statedName: String) -> (name: String, version: Int)? {
        guard let at = statedName.lastIndex(of: "@") else { return (statedName, 1) }
        let digits = statedName[statedName.index(after: at)...]
        guard (1...9).contains(digits.count), digits.first != "0", digits.allSatisfy(\.isASCII),
            let version = Int(digits), version >= 2
        else { return nil }
        return (String(statedName[..<at]), version)
    }

    /// Registers `E` as version `version` of `wireName`, reading the older versions of
    /// `upcasters` and publishing version `published`; returns why not, or `nil`. The same type,
    /// name and version again replaces its upcasters and published version.
    mutating func add<E: Event & Codable>(
        _ type: E.Type, as wireName: String, version: Int, upcasters: [RemoteBridge.Upcaster<E>],
        publishing published: Int
    ) -> String? {
        let id = ObjectIdentifier(type)
        guard (1...999_999_999).contains(version) else { return "an event version is 1 to 999,999,999" }
        if let existing = byType[id], existing.name != wireName || existing.version != version {
            let stated = Self.statedName(existing.name, version: existing.version)
            return "\(type) is already registered as \(stated.debugDescription)"
        }
        if let entry = byName[wireName], entry.type != id { return "the name is already registered for another type" }
        var decoders: [Int: Decode] = [
            version: { data in
                let event = try JSONDecoder().decode(Envelope.Payload<E>.self, from: data).p
                return Decoded(event)
            }
        ]
        var encode: (@Sendable (Any) throws -> Data)?
        for upcaster in upcasters {
            guard upcaster.version < version, upcaster.version >= 1, decoders[upcaster.version] == nil else {
                return "an upcaster's version (\(upcaster.version)) must be below \(version), once each"
            }
            let decode = upcaster.decode
            decoders[upcaster.version] = { data in
                let event = try decode(data)
                return Decoded(event)
            }
            if upcaster.version == published, let downcast = upcaster.downcast {
                encode = { value in
                    guard let event = value as? E else { throw RemoteBridgeError.unregisteredType(E.self) }
                    return try downcast(event)
                }
            }
        }
        if published != version && encode == nil {
            return "publishing version \(published) needs an upcaster of that version with a downcast"
        }
        byType[id] = (
            wireName, version, Publishing(statedName: Self.statedName(wireName, version: published), encode: encode)
        )
        byName[wireName] = Entry(type: id, version: version, decoders: decoders)
        return nil
    }

    /// How `type` is published, if it is registered.
    func publishing<E: Event>(of type: E.Type) -> Publishing? {
        byType[ObjectIdentifier(type)]?.publishing
    }

    /// What the stated wire name `name` of an envelope is to this instance.
    func lookup(statedName: String) -> Lookup {
        guard let (name, version) = Self.parse(statedName: statedName), let entry = byName[name] else {
            return .unknown
        }
        if let decode = entry.decoders[version] { return .decode(decode) }
        if version > entry.version {
            return .unreadable(
                reason: "version \(version) of \(name.debugDescription) is newer than this instance reads "
                    + "(\(entry.version)): upgrade it")
        }
        return .unreadable(
            reason: "version \(version) of \(name.debugDescription) is older than this instance reads "
                + "(\(entry.version)) and it has no upcaster from it")
    }
}
