import Foundation

/// The wire format: one JSON object per payload.
///
/// Version 3 (written by default):
/// `{"v":3,"o":"<origin UUID>","s":<sequence>,"n":"<wire name>","k":"<key>","t":1,"c":{…},"ts":<ms>,"p":<event JSON>}`
/// for an event (`k` only when the event has a key, `t` only for a transactional publish, `c` only
/// when the publisher's bus had a context propagator with headers to carry: W3C `traceparent`,
/// `tracestate` for a tracing one (a `baggage` header only if its instrument injects one: swift-otel 1.6's does
/// not); receivers that do not know `c` ignore it; `ts` the
/// publisher's wall clock, in milliseconds since 1970, when the envelope was made), and
/// `{"v":3,"o":"<origin UUID>","h":<number>}` for a heartbeat; with a shared key, each ends with
/// `,"m":"<HMAC-SHA256>"` (``Authenticator``), which from version 3 also covers the channel's name
/// (``macContext(version:channel:)``). The sequence makes every payload of an origin distinct
/// (PostgreSQL folds identical NOTIFYs of one transaction), lets receivers drop duplicates and count
/// gaps; the signed `ts` lets a receiver that never saw an envelope refuse it as a stale replay. An
/// origin numbers its serial publishes 1, 2, 3… and its transactional ones in a second series of
/// their own (`t`), which commit in any order and may roll back: only the first series is checked
/// for gaps.
///
/// Version 2 is version 3 without `ts`, its MAC over the envelope alone: read (and written) only as
/// `RemoteBridge.Configuration.previousEnvelopeVersion` allows, for a rolling upgrade. Version 1
/// (no MAC, one series) is refused.
///
/// **One step forward.** An instance also reads the version after its own (``newestReadable``):
/// version 4 and every later version only add members, which a reader of the version before
/// ignores, and keep the MAC's context (``macContext(version:channel:)``, with the stated
/// version) and the meaning of every member above. A change that cannot keep that is made as the
/// version two steps ahead, which readers one step behind refuse, and deployed by the protocol
/// (publish the old version until every instance reads the new one). An envelope two or more
/// versions ahead is refused as ``Parsed/newer(reason:)``: live, reported; from a durable store,
/// held (never acknowledged), since an upgraded instance reads it.
enum Envelope {
    /// The version this package writes by default.
    static let version = 3
    /// The newest version this package reads: one step ahead of what it writes.
    static let newestReadable = version + 1
    /// The version before, read (and written) during a rolling upgrade.
    static let previousVersion = 2

    /// What a version-3 MAC covers besides the envelope: the version and the channel (length
    /// first, so no two channels give the same bytes). Empty for version 2.
    static func macContext(version: Int, channel: String) -> String {
        version >= 3 ? "eventbus.v\(version):\(channel.utf8.count):\(channel):" : ""
    }

    /// The encoder of payloads, keys and context headers: sorted keys, slashes unescaped.
    static func payloadEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// The milliseconds since 1970 of `date`, as `ts` carries them.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The fields every envelope has, and those that tell its kind; the payload is decoded later,
    /// as the registered type, from the same bytes.
    struct Header: Decodable {
        let v: Int
        let o: UUID
        let s: UInt64?
        let h: UInt64?
        let n: String?
        let t: Int?
        /// When the publisher made the envelope, its wall clock in milliseconds since 1970 (v3).
        let ts: Int64?
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
        /// The envelope's version.
        let version: Int
        /// When the publisher made it (milliseconds since 1970, its clock), from version 3.
        let signedAt: Int64?
        /// Whether its MAC verified under the shared key (`false` without a key).
        let authenticated: Bool
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
        /// A version too new for this instance: an upgraded one reads it.
        case newer(reason: String)
    }

    /// How a bridge writes its envelopes: the version, and the channel its MACs cover.
    struct Format: Sendable {
        let version: Int
        let channel: String
        var macContext: String { Envelope.macContext(version: version, channel: channel) }
    }

    /// The text of an event envelope, made now. `wireName` is validated ASCII and `keyJSON` an
    /// encoded JSON string (or `nil`), so only the payload needs no escaping: it is JSON already.
    static func event(
        _ fields: EventFields, sequence: UInt64, format: Format, signer: Authenticator?, now: Date = Date()
    ) -> String {
        var text =
            #"{"v":"# + String(format.version) + #","o":""# + fields.origin.uuidString + #"","s":"#
            + String(sequence) + #","n":""# + fields.wireName + #"""#
        if let keyJSON = fields.keyJSON { text += #","k":"# + keyJSON }
        if fields.transactional { text += #","t":1"# }
        if let contextJSON = fields.contextJSON { text += #","c":"# + contextJSON }
        if format.version >= 3 { text += #","ts":"# + String(milliseconds(now)) }
        text += #","p":"# + fields.payload + "}"
        return signer?.sign(text, context: format.macContext) ?? text
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
    static func heartbeat(origin: UUID, number: UInt64, format: Format, signer: Authenticator?) -> String {
        let text =
            #"{"v":"# + String(format.version) + #","o":""# + origin.uuidString + #"","h":"# + String(number) + "}"
        return signer?.sign(text, context: format.macContext) ?? text
    }

    /// The version an envelope states in its first member (`{"v":<digits>,`), read before anything
    /// is authenticated or parsed; `nil` if it does not start so.
    static func statedVersion(_ payload: String) -> Int? {
        let prefix = Array(#"{"v":"#.utf8)
        var digits = 0
        var value = 0
        for (index, byte) in payload.utf8.enumerated() {
            if index < prefix.count {
                guard byte == prefix[index] else { return nil }
                continue
            }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                return digits > 0 && byte == UInt8(ascii: ",") ? value : nil
            }
            digits += 1
            if digits > 4 { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return nil
    }

    /// Classifies an untrusted payload: reads the version it states, refuses one it does not read
    /// (`acceptsPrevious`: whether version 2 is read), authenticates it when there is a key (the
    /// MAC covering `channel` from version 3), then parses it. Never traps.
    static func parse(
        _ payload: String, maximumBytes: Int, verifier: Authenticator?, channel: String, acceptsPrevious: Bool
    ) -> Parsed {
        if payload.utf8.count > maximumBytes + 1 { return .invalid(reason: "longer than the transport allows") }
        guard let stated = statedVersion(payload) else {
            // Not the start of an envelope: with a key, unsigned too (as before versions were read first).
            if let verifier, case .failure(let refusal) = verifier.verify(payload) {
                return .unauthenticated(reason: refusal.reason)
            }
            return .invalid(reason: "not an EventBus envelope")
        }
        if stated > newestReadable {
            return .newer(
                reason:
                    "envelope version \(stated) is newer than this instance reads (\(previousVersion) to \(newestReadable)): "
                    + "upgrade it")
        }
        if stated < previousVersion || (stated == previousVersion && !acceptsPrevious) {
            return .invalid(
                reason: "unsupported envelope version \(stated)"
                    + (stated == previousVersion ? " (Configuration.previousEnvelopeVersion is .refused)" : ""))
        }
        var text = payload
        if let verifier {
            switch verifier.verify(payload, context: macContext(version: stated, channel: channel)) {
            case .success(let unsigned): text = unsigned
            case .failure(let refusal): return .unauthenticated(reason: refusal.reason)
            }
        }
        return parseHeader(payload, text, version: stated, authenticated: verifier != nil)
    }

    /// Parses `text` (`payload` without its MAC) whose stated version is `version`.
    private static func parseHeader(_ payload: String, _ text: String, version stated: Int, authenticated: Bool)
        -> Parsed
    {
        let data = Data(text.utf8)
        let header: Header
        do {
            header = try JSONDecoder().decode(Header.self, from: data)
        } catch {
            return .invalid(reason: "not an EventBus envelope")
        }
        guard header.v == stated else { return .invalid(reason: "unsupported envelope version \(header.v)") }
        if let number = header.h { return .heartbeat(origin: header.o, number: number) }
        guard let sequence = header.s, let wireName = header.n else {
            return .invalid(reason: "an envelope without a sequence or a wire name")
        }
        if header.v >= 3 && header.ts == nil { return .invalid(reason: "a version 3 envelope without a timestamp") }
        return .event(
            Received(
                stream: Stream(origin: header.o, transactional: header.t == 1), sequence: sequence,
                wireName: wireName, data: data, digest: Authenticator.digest(payload), context: header.c,
                version: header.v, signedAt: header.ts, authenticated: authenticated))
    }
}
