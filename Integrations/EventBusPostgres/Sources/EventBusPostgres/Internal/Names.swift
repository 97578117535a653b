/// The validation of channel names (wire names are validated by EventBusRemote).
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
}
