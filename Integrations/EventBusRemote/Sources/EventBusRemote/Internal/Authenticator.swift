import Crypto
import Foundation

/// Signs and verifies envelopes with HMAC-SHA256 under the shared key.
///
/// A signed envelope is the JSON object of the unsigned one with one last member,
/// `,"m":"<64 lowercase hex digits>"`, the MAC of the unsigned text's UTF-8 bytes: the signer
/// appends it and the verifier strips it, byte for byte, so no JSON canonicalisation is involved.
///
/// From envelope version 3 the MAC also covers a `context` that is not sent: the channel's name
/// (``Envelope/macContext(version:channel:)``), so that an envelope signed for one channel does not
/// verify on another, and a version 3 MAC never verifies as a version 2 one.
struct Authenticator: Sendable {
    private let key: SymmetricKey

    /// `,"m":"` + 64 hex digits + `"}`.
    static let suffixLength = 6 + 64 + 2

    init(key: Data) {
        self.key = SymmetricKey(data: key)
    }

    /// `envelope` (a JSON object) with its MAC, over `context` and the envelope, as last member.
    func sign(_ envelope: String, context: String = "") -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data((context + envelope).utf8), using: key)
        return String(envelope.dropLast()) + #","m":""# + Self.hex(mac) + #""}"#
    }

    /// The HMAC-SHA256 of `text`'s UTF-8 bytes, as 64 lowercase hex digits (a pending event's MAC).
    func mac(of text: String) -> String {
        Self.hex(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key))
    }

    /// Whether `mac` (64 lowercase hex digits) is the HMAC-SHA256 of `text`, compared in constant time.
    func isValid(mac: String, of text: String) -> Bool {
        let digits = Array(mac.utf8)
        guard digits.count == 64, let bytes = Self.bytes(fromHex: digits[...]) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(bytes, authenticating: Data(text.utf8), using: key)
    }

    /// The unsigned envelope if `text` carries a valid MAC over `context` and the envelope, or why not.
    func verify(_ text: String, context: String = "") -> Result<String, Refusal> {
        let bytes = Array(text.utf8)
        guard bytes.count > Self.suffixLength,
            bytes[(bytes.count - Self.suffixLength)...].starts(with: Array(#","m":""#.utf8)),
            bytes.suffix(2) == Array(#""}"#.utf8)
        else { return .failure(Refusal(reason: "no MAC: unsigned, or signed differently")) }
        let hexDigits = bytes[(bytes.count - 66)..<(bytes.count - 2)]
        guard let mac = Self.bytes(fromHex: hexDigits) else { return .failure(Refusal(reason: "a malformed MAC")) }
        var unsigned = Array(bytes[..<(bytes.count - Self.suffixLength)])
        unsigned.append(UInt8(ascii: "}"))
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Array(context.utf8) + unsigned, using: key)
        else {
            return .failure(Refusal(reason: "a wrong MAC: another key or channel, or altered"))
        }
        return .success(String(decoding: unsigned, as: UTF8.self))
    }

    /// Why an envelope did not authenticate.
    struct Refusal: Error {
        let reason: String
    }

    private static func hex(_ mac: HashedAuthenticationCode<SHA256>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in mac {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func bytes(fromHex digits: ArraySlice<UInt8>) -> [UInt8]? {
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var result: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    /// The first 8 bytes of the SHA-256 of `text`, to tell two envelopes with the same (origin,
    /// sequence) apart.
    static func digest(_ text: String) -> UInt64 {
        SHA256.hash(data: Data(text.utf8)).prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
