extension JSONValue {
    /// The JSON value of any `Encodable` value, built directly (no JSON text in between, and no
    /// Foundation): what `JSONDecoder` would decode from `JSONEncoder`'s output, for the usual
    /// types.
    ///
    /// Structs and dictionaries with `String` keys become objects, arrays and sets become arrays,
    /// optionals that are `nil` are left out (or `null`, if the type encodes `nil` explicitly), and
    /// numbers become ``int(_:)`` or ``double(_:)``. It runs on the calling thread and touches no
    /// bus.
    ///
    /// ```swift
    /// struct CartLine: Encodable { let sku: String; let quantity: Int }
    /// let lines = [CartLine(sku: "A-1", quantity: 2)]
    /// let payload = try JSONValue(encoding: ["lines": lines])
    /// payload["lines"]?[0]?["quantity"]?.intValue   // 2
    /// bus.dispatch(JSONEvent(id: "cart.updated", payload: payload))
    /// ```
    ///
    /// Differences from `JSONEncoder`: Foundation types encode with their own `Codable`
    /// representation, not `JSONEncoder`'s strategies (a `Date` is a number of seconds since 2001,
    /// `Data` an array of bytes); a dictionary whose keys are not `String` or `Int` is an array of
    /// alternating keys and values, as with `JSONEncoder`. For `JSONEncoder`'s strategies, encode
    /// with it and decode a `JSONValue` from its output.
    ///
    /// - Throws: `EncodingError.invalidValue` for a non-finite floating-point number (JSON has no
    ///   NaN or infinity), an integer that does not fit in `Int`, containers nested deeper than
    ///   ``maximumCodingDepth`` by `encode(to:)` methods, or a top-level value that encodes
    ///   nothing; and any error the value's own `encode(to:)` throws. A `JSONValue` met in `value`
    ///   (or `value` itself) is taken as it is, whatever its depth: it is already a `JSONValue`,
    ///   so nothing is encoded recursively.
    public init(encoding value: some Encodable) throws {
        let root = PartialJSON()
        try JSONValueEncoder.encode(value, into: root, at: [])
        if case .empty = root.content {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "\(type(of: value)) did not encode any value")
            )
        }
        self = root.resolved
    }
}
