import Foundation

/// The wire format: one JSON object per NOTIFY payload.
///
/// `{"v":1,"o":"<origin UUID>","s":<sequence>,"n":"<wire name>","k":"<key>","t":1,"p":<event JSON>}`
/// for an event (`k` only when the event has a key, `t` only for a transactional publish), and
/// `{"v":1,"o":"<origin UUID>","h":<number>}` for a heartbeat. The sequence makes every payload of
/// an origin distinct, so that PostgreSQL does not fold two identical events sent in one
/// transaction, and lets receivers drop duplicates.
enum Envelope {
    static let version = 1

    /// The fields every envelope has, and those that tell its kind; the payload is decoded later,
    /// as the registered type, from the same bytes.
    struct Header: Decodable {
        let v: Int
        let o: UUID
        let s: UInt64?
        let h: UInt64?
        let n: String?
        let k: String?
        let t: Int?
    }

    /// The payload of an envelope, as `E`.
    struct Payload<E: Decodable>: Decodable {
        let p: E
    }

    /// What a notification turned out to be.
    enum Parsed {
        case heartbeat(origin: UUID, number: UInt64)
        case event(origin: UUID, sequence: UInt64, wireName: String, transactional: Bool, data: Data)
        case invalid(reason: String)
    }

    /// The text of an event envelope. `wireName` is validated ASCII and `keyJSON` an encoded JSON
    /// string (or `nil`), so only the payload needs no escaping: it is JSON already.
    static func event(
        origin: UUID, sequence: UInt64, wireName: String, keyJSON: String?, transactional: Bool, payload: String
    ) -> String {
        var text = #"{"v":1,"o":""# + origin.uuidString + #"","s":"# + String(sequence) + #","n":""# + wireName + #"""#
        if let keyJSON { text += #","k":"# + keyJSON }
        if transactional { text += #","t":1"# }
        text += #","p":"# + payload + "}"
        return text
    }

    /// The text of a heartbeat envelope.
    static func heartbeat(origin: UUID, number: UInt64) -> String {
        #"{"v":1,"o":""# + origin.uuidString + #"","h":"# + String(number) + "}"
    }

    /// Classifies an untrusted payload. Never traps.
    static func parse(_ payload: String) -> Parsed {
        let data = Data(payload.utf8)
        if data.count > PostgresEventBridge.maximumPayloadBytes + 1 {
            return .invalid(reason: "longer than PostgreSQL allows")
        }
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: data)
        } catch {
            return .invalid(reason: "not an EventBus envelope")
        }
        guard header.v == version else { return .invalid(reason: "unsupported envelope version \(header.v)") }
        if let number = header.h { return .heartbeat(origin: header.o, number: number) }
        guard let sequence = header.s, let wireName = header.n else {
            return .invalid(reason: "an envelope without a sequence or a wire name")
        }
        return .event(
            origin: header.o, sequence: sequence, wireName: wireName, transactional: header.t == 1, data: data)
    }
}
