/// A JSON value: the payload of a ``JSONEvent``, and a `Sendable` stand-in for `[String: Any]`.
///
/// Build one with literals, read it with the typed accessors, and encode or decode it with any
/// `Codable` coder. Equality is by value, and numeric for numbers, since JSON has only one number
/// type: `.int(2) == .double(2.0)` (an encoder may well write `2.0` as `2`), and `.double(.nan)`
/// equals itself so that `Hashable` holds (JSON itself has no NaN or infinity: encoding them throws).
///
/// ```swift
/// let payload: JSONValue = ["userID": "42", "roles": ["admin"], "age": 31, "verified": true]
/// payload["roles"]?[0]?.stringValue   // "admin"
/// payload["age"]?.intValue            // 31
/// ```
public enum JSONValue: Sendable, Hashable, Codable {
    /// JSON `null`; also written `nil` in a literal.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number that decoded as an integer; `42` in a literal.
    case int(Int)
    /// Any other number; `4.2` in a literal.
    case double(Double)
    /// A string.
    case string(String)
    /// An ordered list of values.
    case array([JSONValue])
    /// Members by name; member order is not kept.
    case object([String: JSONValue])

    /// The member named `key` of an object, or `nil` (not an object, or no such member).
    ///
    /// ```swift
    /// payload["userID"]?.stringValue
    /// ```
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    /// The element at `index` of an array, or `nil` (not an array, or out of bounds).
    ///
    /// ```swift
    /// payload["roles"]?[0]
    /// ```
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return nil }
        return elements[index]
    }

    /// The string, if this is `.string`.
    ///
    /// ```swift
    /// JSONValue.string("a").stringValue   // "a"
    /// ```
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The integer, if this is `.int`.
    ///
    /// ```swift
    /// JSONValue.int(3).intValue   // 3
    /// ```
    public var intValue: Int? {
        if case .int(let value) = self { value } else { nil }
    }

    /// The number, if this is `.double` or `.int`.
    ///
    /// ```swift
    /// JSONValue.int(3).doubleValue   // 3.0
    /// ```
    public var doubleValue: Double? {
        switch self {
        case .double(let value): value
        case .int(let value): Double(value)
        default: nil
        }
    }

    /// The Boolean, if this is `.bool`.
    ///
    /// ```swift
    /// JSONValue.bool(true).boolValue   // true
    /// ```
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// Decodes `null`, a Boolean, an integer, a floating-point number, a string, an array or an object.
    ///
    /// ```swift
    /// let value = try JSONDecoder().decode(JSONValue.self, from: data)
    /// ```
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value")
        }
    }

    /// Encodes the value as the JSON it stands for.
    ///
    /// ```swift
    /// let data = try JSONEncoder().encode(payload)
    /// ```
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil` is JSON `null`: `let value: JSONValue = nil`.
    public init(nilLiteral: ()) { self = .null }
    /// `let value: JSONValue = true`
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `let value: JSONValue = 42`
    public init(integerLiteral value: Int) { self = .int(value) }
    /// `let value: JSONValue = 4.2`
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `let value: JSONValue = "text"`
    public init(stringLiteral value: String) { self = .string(value) }
    /// `let value: JSONValue = [1, "two", nil]`
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// `let value: JSONValue = ["id": 1]`; a key given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue {
    /// Equal values, with numbers compared by value: `.int(2) == .double(2.0)`, and NaN equals NaN.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.double(let a), .double(let b)): a == b || (a.isNaN && b.isNaN)
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): Int(exactly: b) == a
        default: false
        }
    }

    /// Hashes consistently with `==`: an integral `.double` hashes as the `.int` it equals.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value): hasher.combine(1); hasher.combine(value)
        case .int(let value): hasher.combine(2); hasher.combine(value)
        case .double(let value):
            if let integral = Int(exactly: value) {
                hasher.combine(2); hasher.combine(integral)
            } else {
                hasher.combine(3); hasher.combine(value.isNaN ? .nan : value)
            }
        case .string(let value): hasher.combine(4); hasher.combine(value)
        case .array(let value): hasher.combine(5); hasher.combine(value)
        case .object(let value): hasher.combine(6); hasher.combine(value)
        }
    }
}
