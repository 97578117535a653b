/// An `Encoder` that builds a ``JSONValue`` directly, with no Foundation and no JSON text in between:
/// the machinery of ``JSONValue/init(encoding:)``.
///
/// Containers write into ``PartialJSON`` nodes (reference types, so a container handed out earlier
/// still writes into the tree), which are resolved into a `JSONValue` once encoding is done. Nesting
/// is bounded by ``JSONValue/maximumCodingDepth``, like `JSONValue`'s own `encode(to:)`, so a value
/// nested too deep throws instead of overflowing the stack.
struct JSONValueEncoder: Encoder {
    let node: PartialJSON
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return UnkeyedContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(node: node, codingPath: codingPath)
    }

    /// Encodes `value` into `node`, one level below `codingPath` (whose last key is the value's).
    static func encode(_ value: some Encodable, into node: PartialJSON, at codingPath: [any CodingKey]) throws {
        if let json = try scalar(value, at: codingPath) {
            node.content = .value(json)
            return
        }
        guard codingPath.count <= JSONValue.maximumCodingDepth else {
            throw EncodingError.invalidValue(
                value,
                .init(
                    codingPath: codingPath,
                    debugDescription:
                        "Nested deeper than JSONValue.maximumCodingDepth (\(JSONValue.maximumCodingDepth))"
                )
            )
        }
        try value.encode(to: JSONValueEncoder(node: node, codingPath: codingPath))
    }

    /// The JSON value of `value` if it is a JSON scalar (or already a `JSONValue`), else `nil`.
    static func scalar(_ value: some Encodable, at codingPath: [any CodingKey]) throws -> JSONValue? {
        switch value {
        case let json as JSONValue: return json
        case let bool as Bool: return .bool(bool)
        case let string as String: return .string(string)
        case let double as Double: return try number(double, original: double, at: codingPath)
        // A Float as the Double its shortest decimal form denotes (0.1, not 0.100000001…), as JSON
        // text written by an encoder would read back.
        case let float as Float: return try number(Double("\(float)") ?? Double(float), original: float, at: codingPath)
        case let int as Int: return .int(int)
        case let int as Int8: return .int(Int(int))
        case let int as Int16: return .int(Int(int))
        case let int as Int32: return .int(Int(int))
        case let int as Int64: return try integer(int, at: codingPath)
        case let int as UInt: return try integer(int, at: codingPath)
        case let int as UInt8: return .int(Int(int))
        case let int as UInt16: return .int(Int(int))
        case let int as UInt32: return try integer(int, at: codingPath)
        case let int as UInt64: return try integer(int, at: codingPath)
        default: return nil
        }
    }

    /// The JSON value of a number that must be finite, or an `EncodingError`.
    private static func number(_ value: Double, original: Any, at codingPath: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(
                original, .init(codingPath: codingPath, debugDescription: "JSON has no NaN or infinity: \(value)")
            )
        }
        return .double(value)
    }

    /// The JSON value of an integer that fits in `Int`, or an `EncodingError`.
    private static func integer<T: BinaryInteger>(_ value: T, at codingPath: [any CodingKey]) throws -> JSONValue {
        guard let exact = Int(exactly: value) else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: codingPath, debugDescription: "\(value) does not fit in Int")
            )
        }
        return .int(exact)
    }
}

/// A node of the value being encoded.
final class PartialJSON {
    enum Content {
        /// Nothing encoded yet.
        case empty
        case value(JSONValue)
        case array([PartialJSON])
        case object([String: PartialJSON])
    }

    var content: Content = .empty

    func becomeObject() {
        if case .object = content { return }
        content = .object([:])
    }

    func becomeArray() {
        if case .array = content { return }
        content = .array([])
    }

    /// A new node for the member `key` (replacing an earlier one of the same name).
    func member(_ key: String) -> PartialJSON {
        let child = PartialJSON()
        becomeObject()
        if case .object(var members) = content {
            content = .empty  // keeps `members` uniquely referenced while it is mutated
            members[key] = child
            content = .object(members)
        }
        return child
    }

    /// A new node appended to the array.
    func appended() -> PartialJSON {
        let child = PartialJSON()
        becomeArray()
        if case .array(var elements) = content {
            content = .empty
            elements.append(child)
            content = .array(elements)
        }
        return child
    }

    /// The number of elements, if this is an array.
    var count: Int {
        if case .array(let elements) = content { return elements.count }
        return 0
    }

    /// The finished value; a container that encoded nothing is an empty object. The depth is
    /// bounded by the encoder, so this recursion is too.
    var resolved: JSONValue {
        switch content {
        case .empty: .object(JSONObject())
        case .value(let value): value
        case .array(let elements): .array(JSONArray(elements.map(\.resolved)))
        case .object(let members): .object(JSONObject(members.mapValues(\.resolved)))
        }
    }
}

/// A coding key for array positions and `super`.
private struct IndexKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}

// The containers implement `encodeNil` and one generic `encode`, which witnesses every primitive
// overload of their protocols (Bool, String, the integers, the floating-point types).

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: PartialJSON
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.member(key.stringValue).content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try JSONValueEncoder.encode(value, into: node.member(key.stringValue), at: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        JSONValueEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        JSONValueEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        JSONValueEncoder(node: node.member("super"), codingPath: codingPath + [IndexKey(stringValue: "super")])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        JSONValueEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: PartialJSON
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    private var nextKey: IndexKey { IndexKey(intValue: node.count) }

    mutating func encodeNil() throws { node.appended().content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = codingPath + [nextKey]
        try JSONValueEncoder.encode(value, into: node.appended(), at: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let path = codingPath + [nextKey]
        return JSONValueEncoder(node: node.appended(), codingPath: path).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [nextKey]
        return JSONValueEncoder(node: node.appended(), codingPath: path).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let path = codingPath + [nextKey]
        return JSONValueEncoder(node: node.appended(), codingPath: path)
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let node: PartialJSON
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.content = .value(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        // The same level: a single value container does not add a key.
        if let json = try JSONValueEncoder.scalar(value, at: codingPath) {
            node.content = .value(json)
        } else {
            try value.encode(to: JSONValueEncoder(node: node, codingPath: codingPath))
        }
    }
}
