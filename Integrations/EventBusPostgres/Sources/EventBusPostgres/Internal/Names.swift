/// The validation of channel and wire names.
enum Names {
    /// Whether `name` is a channel the bridge accepts: a lowercase identifier of 1 to 63 bytes
    /// (PostgreSQL truncates longer ones, and folds unquoted ones to lowercase: with these rules
    /// `NOTIFY app_events` in psql reaches the same channel).
    static func isValidChannel(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...63).contains(bytes.count), let first = bytes.first else { return false }
        guard first == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else {
            return false
        }
        return bytes.allSatisfy { byte in
            byte == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
    }

    /// Why `name` cannot be a wire name, or `nil` if it can: 1 to 128 bytes of letters, digits,
    /// `.`, `_`, `-` and `:` (so that the envelope needs no escaping for it).
    static func wireNameProblem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard (1...128).contains(bytes.count) else { return "a wire name has 1 to 128 bytes" }
        let allowed = bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || ".-_:".utf8.contains(byte)
        }
        return allowed ? nil : "a wire name uses only letters, digits, '.', '-', '_' and ':'"
    }
}
