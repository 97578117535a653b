import Foundation

/// The wire format: one JSON object per payload.
///
/// `{"v":2,"o":"<origin UUID>","s":<sequence>,"n":"<wire name>","k":"<key>","t":1,"c":{…},"p":<event JSON>}`
/// for an event (`k` only when the event has a key, `t` only for a transactional publish, `c` only
/// when the publisher's bus had a context propagator with headers to carry: W3C `traceparent`,
/// `tracestate`, `baggage` for a tracing one; receivers that do not know `c` ignore it), and
/// `{"v":2,"o":"<origin UUID>","h":<number>}` for a heartbeat; with a shared key, each ends with
/// `,"m":"<HMAC-SHA256>"` (``Authenticator``). The sequence makes every payload of an origin
/// distinct (PostgreSQL folds identical NOTIFYs of one transaction), lets receivers drop duplicates
/// and count gaps. An origin numbers its serial publishes 1, 2, 3… and its transactional ones in a
/// second series of their own (`t`), which commit in any order and may roll back: only the first
/// series is checked for gaps.
///
/// Version 1 (no MAC, one series) is refused as an unsupported version: its receivers could not
/// tell a rolled-back transactional publish from a loss.
enum Envelope {
    static let version = 2

    /// The fields every envelope has, and those that tell its kind; the payload is decoded later,
    /// as the registered type, from the same bytes.
    struct Header: Decodable {
        let v: Int
        let o: UUID
        let s: UInt64?
        let h: UInt64?
        let n: String?
        let t: Int?
        /// The publisher's context headers (see ``EventFields/contextJSON``).
        let c: [String: String]?
    }

    /// The payload of an envelope, as `E`.
    struct Payload<E: Decodable>: Decodable {
        let p: E
    }

    /// An event envelope that parsed: who sent it, its place in the sender's series, its bytes.
    struct Received {
        let stream: Stream
        let sequence: UInt64
        let wireName: String
        let data: Data
        /// ``Authenticator/digest(_:)`` of the envelope's text, to tell a repeat from a conflict.
        let digest: UInt64
        /// The publisher's context headers, if it sent any.
        let context: [String: String]?
    }

    /// One origin's series of sequence numbers: its serial publishes, or its transactional ones.
    struct Stream: Hashable {
        let origin: UUID
        let transactional: Bool
    }

    /// What a payload turned out to be.
    enum Parsed {
        case heartbeat(origin: UUID, number: UInt64)
        case event(Received)
        case invalid(reason: String)
        case unauthenticated(reason: String)
    }

    /// The text of an event envelope. `wireName` is validated ASCII and `keyJSON` an encoded JSON
    /// string (or `nil`), so only the payload needs no escaping: it is JSON already.
    static func event(_ fields: EventFields, sequence: UInt64, signer: Authenticator?) -> String {
        var text =
            #"{"v":2,"o":""# + fields.origin.uuidString + #"","s":"# + String(sequence) + #","n":""#
            + fields.wireName + #"""#
        if let keyJSON = fields.keyJSON { text += #","k":"# + keyJSON }
        if fields.transactional { text += #","t":1"# }
        if let contextJSON = fields.contextJSON { text += #","c":"# + contextJSON }
        text += #","p":"# + fields.payload + "}"
        return signer?.sign(text) ?? text
    }

    /// What an event envelope says besides its sequence number.
    struct EventFields: Sendable {
        let origin: UUID
        let wireName: String
        let keyJSON: String?
        let transactional: Bool
        /// The publisher's context headers as a JSON object of strings, `nil` for none.
        var contextJSON: String? = nil
        let payload: String
    }

    /// The text of a heartbeat envelope.
    static func heartbeat(origin: UUID, number: UInt64, signer: Authenticator?) -> String {
        let text = #"{"v":2,"o":""# + origin.uuidString + #"","h":"# + String(number) + "}"
        return signer?.sign(text) ?? text
    }

    /// Classifies an untrusted payload: authenticates it first when there is a key. Never traps.
    static func parse(_ payload: String, maximumBytes: Int, verifier: Authenticator?) -> Parsed {
        if payload.utf8.count > maximumBytes + 1 { return .invalid(reason: "longer than the transport allows") }
        var text = payload
        if let verifier {
            switch verifier.verify(payload) {
            case .success(let unsigned): text = unsigned
            case .failure(let refusal): return .unauthenticated(reason: refusal.reason)
            }
        }
        let data = Data(text.utf8)
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
            Received(
                stream: Stream(origin: header.o, transactional: header.t == 1), sequence: sequence,
                wireName: wireName, data: data, digest: Authenticator.digest(payload), context: header.c))
    }
}
