/// The validation of wire names.
enum Names {
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

    /// Why `name` cannot be a wire name as an envelope states it, or `nil` if it can: a wire name,
    /// followed for version 2 and later by `@` and the version (``Registry/statedName(_:version:)``).
    static func statedWireNameProblem(_ name: String) -> String? {
        guard let (base, _) = Registry.parse(statedName: name) else {
            return "a wire name's version is '@' and a number from 2, without leading zeros"
        }
        return wireNameProblem(base)
    }
}
