/// The members of a ``JSONValue/object(_:)-enum.case``: JSON values by name, used like a
/// `Dictionary<String, JSONValue>` (member order is not kept).
///
/// It is a collection of `(key, value)` pairs with value semantics and a subscript by name, built
/// from a dictionary literal or from `[String: JSONValue]`, and convertible back with ``members``.
/// It exists instead of a plain dictionary payload so that a value nested arbitrarily deep is
/// released without recursion (see ``JSONValue``, "Deeply nested values").
///
/// ```swift
/// let value: JSONValue = ["userID": "42", "age": 31]
/// if case .object(let fields) = value {
///     print(fields["userID"]?.stringValue ?? "", fields.count)   // 42 2
///     for (name, field) in fields { print(name, field) }
///     let plain: [String: JSONValue] = fields.members
/// }
/// ```
public struct JSONObject: Sendable {
    /// The members, shared between copies until one of them is mutated (copy on write).
    var storage: JSONObjectStorage

    /// An object with the given members.
    ///
    /// ```swift
    /// JSONObject(["id": 1])
    /// ```
    public init(_ members: [String: JSONValue]) {
        storage = JSONObjectStorage(members)
    }

    /// An empty object.
    ///
    /// ```swift
    /// var fields = JSONObject()
    /// fields["id"] = 1
    /// ```
    public init() {
        storage = JSONObjectStorage.empty
    }

    /// The members as a plain Swift dictionary.
    ///
    /// ```swift
    /// let plain: [String: JSONValue] = fields.members
    /// ```
    public var members: [String: JSONValue] {
        get { storage.members }
        set { withUniqueMembers { $0 = newValue } }
    }

    /// The member named `key`, or `nil`; setting `nil` removes the member.
    ///
    /// ```swift
    /// fields["age"]?.intValue
    /// fields["age"] = 32
    /// ```
    public subscript(key: String) -> JSONValue? {
        get { storage.members[key] }
        set { withUniqueMembers { $0[key] = newValue } }
    }

    /// The member names.
    ///
    /// ```swift
    /// fields.keys.sorted()
    /// ```
    public var keys: Dictionary<String, JSONValue>.Keys { storage.members.keys }

    /// The member values.
    ///
    /// ```swift
    /// fields.values.compactMap(\.intValue)
    /// ```
    public var values: Dictionary<String, JSONValue>.Values { storage.members.values }

    /// Removes the member named `key` and returns its value, if there was one.
    ///
    /// ```swift
    /// fields.removeValue(forKey: "age")
    /// ```
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        withUniqueMembers { $0.removeValue(forKey: key) }
    }

    /// Runs `body` on the members of a storage this value alone references (copying it first if
    /// it is shared).
    mutating func withUniqueMembers<R>(_ body: (inout [String: JSONValue]) throws -> R) rethrows -> R {
        if !isKnownUniquelyReferenced(&storage) { storage = JSONObjectStorage(storage.members) }
        return try body(&storage.members)
    }
}

extension JSONObject: Collection {
    /// A position of a member; valid until the object is mutated.
    public typealias Index = Dictionary<String, JSONValue>.Index

    /// The position of the first member.
    public var startIndex: Index { storage.members.startIndex }

    /// The position past the last member.
    public var endIndex: Index { storage.members.endIndex }

    /// The position after `index`.
    public func index(after index: Index) -> Index { storage.members.index(after: index) }

    /// The member at `position`.
    ///
    /// ```swift
    /// for (name, field) in fields { print(name, field) }
    /// ```
    public subscript(position: Index) -> (key: String, value: JSONValue) { storage.members[position] }

    /// The number of members.
    public var count: Int { storage.members.count }

    /// Whether there are no members.
    public var isEmpty: Bool { storage.members.isEmpty }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// `let fields: JSONObject = ["id": 1]`; a key given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONObject: Hashable {
    /// Member-wise equality, as ``JSONValue``'s (numbers by value), at any depth.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        JSONValue.object(lhs) == JSONValue.object(rhs)
    }

    /// Hashes as ``JSONValue/object(_:)-enum.case`` with the same members does.
    public func hash(into hasher: inout Hasher) {
        JSONValue.object(self).hash(into: &hasher)
    }
}

extension JSONObject: Codable {
    /// Decodes a JSON object (see ``JSONValue/init(from:)`` for the depth limit).
    ///
    /// ```swift
    /// let fields = try JSONDecoder().decode(JSONObject.self, from: Data(#"{"id": 1}"#.utf8))
    /// ```
    public init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSONValue(from: decoder) else {
            throw DecodingError.typeMismatch(
                JSONObject.self,
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "Not a JSON object")
            )
        }
        self = object
    }

    /// Encodes the JSON object (see ``JSONValue/encode(to:)`` for the depth limit).
    ///
    /// ```swift
    /// let data = try JSONEncoder().encode(fields)
    /// ```
    public func encode(to encoder: any Encoder) throws {
        try JSONValue.object(self).encode(to: encoder)
    }
}

extension JSONObject: CustomStringConvertible, CustomDebugStringConvertible {
    /// The object as compact JSON text, members sorted by name.
    ///
    /// ```swift
    /// print(fields)   // {"age":31,"userID":"42"}
    /// ```
    public var description: String { JSONValue.object(self).description }

    /// Same as ``description``.
    public var debugDescription: String { description }
}

/// The shared, copy-on-write storage of a ``JSONObject``; its deinit releases nested values
/// iteratively.
final class JSONObjectStorage: @unchecked Sendable {
    // @unchecked Sendable: `members` is mutated only through `JSONObject.withUniqueMembers`, that
    // is, only while a single value references the storage; shared storage is never written.
    var members: [String: JSONValue]

    /// The storage of every empty object made by `init()`: never uniquely referenced (this
    /// constant holds it), so never written.
    static let empty = JSONObjectStorage([:])

    init(_ members: [String: JSONValue]) {
        self.members = members
    }

    deinit {
        JSONValue.dismantle(&members)
    }
}
