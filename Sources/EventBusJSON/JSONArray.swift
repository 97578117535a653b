/// The elements of a ``JSONValue/array(_:)-enum.case``: an ordered list of JSON values, used like an
/// `Array<JSONValue>`.
///
/// It is a collection (random access, mutable, range-replaceable) with value semantics, built from
/// an array literal or from `[JSONValue]`, and convertible back with ``elements``. It exists instead
/// of a plain `[JSONValue]` payload so that a value nested arbitrarily deep is released without
/// recursion (see ``JSONValue``, "Deeply nested values").
///
/// ```swift
/// let value: JSONValue = ["admin", "editor"]
/// if case .array(let roles) = value {
///     print(roles.count, roles[0].stringValue ?? "")   // 2 admin
///     let plain: [JSONValue] = roles.elements
/// }
/// ```
public struct JSONArray: Sendable {
    /// The elements, shared between copies until one of them is mutated (copy on write).
    var storage: JSONArrayStorage

    /// An array with the given elements.
    ///
    /// ```swift
    /// JSONArray([1, "two", nil])
    /// ```
    public init(_ elements: [JSONValue]) {
        storage = JSONArrayStorage(elements)
    }

    /// An array with the elements of `elements`.
    ///
    /// ```swift
    /// JSONArray((1...3).map { JSONValue.int($0) })
    /// ```
    public init<S: Sequence>(_ elements: S) where S.Element == JSONValue {
        storage = JSONArrayStorage(Array(elements))
    }

    /// The elements as a plain Swift array.
    ///
    /// ```swift
    /// let plain: [JSONValue] = roles.elements
    /// ```
    public var elements: [JSONValue] {
        get { storage.elements }
        set { withUniqueElements { $0 = newValue } }
    }

    /// Runs `body` on the elements of a storage this value alone references (copying it first if
    /// it is shared).
    mutating func withUniqueElements<R>(_ body: (inout [JSONValue]) throws -> R) rethrows -> R {
        if !isKnownUniquelyReferenced(&storage) { storage = JSONArrayStorage(storage.elements) }
        return try body(&storage.elements)
    }
}

extension JSONArray: RandomAccessCollection, MutableCollection, RangeReplaceableCollection {
    /// An empty array.
    ///
    /// ```swift
    /// var list = JSONArray()
    /// list.append("item")
    /// ```
    public init() {
        storage = JSONArrayStorage.empty
    }

    /// The position of the first element: always 0.
    public var startIndex: Int { 0 }

    /// The number of elements.
    public var endIndex: Int { storage.elements.count }

    /// The element at `position`.
    ///
    /// ```swift
    /// roles[0].stringValue
    /// ```
    public subscript(position: Int) -> JSONValue {
        get { storage.elements[position] }
        set { withUniqueElements { $0[position] = newValue } }
    }

    /// Replaces the elements in `subrange` with `newElements`.
    ///
    /// ```swift
    /// list.replaceSubrange(0..<1, with: ["first"])
    /// ```
    public mutating func replaceSubrange<C: Collection>(_ subrange: Range<Int>, with newElements: C)
    where C.Element == JSONValue {
        withUniqueElements { $0.replaceSubrange(subrange, with: newElements) }
    }

    /// Reserves room for `minimumCapacity` elements.
    ///
    /// ```swift
    /// list.reserveCapacity(100)
    /// ```
    public mutating func reserveCapacity(_ minimumCapacity: Int) {
        withUniqueElements { $0.reserveCapacity(minimumCapacity) }
    }
}

extension JSONArray: ExpressibleByArrayLiteral {
    /// `let list: JSONArray = [1, "two", nil]`
    public init(arrayLiteral elements: JSONValue...) {
        self.init(elements)
    }
}

extension JSONArray: Hashable {
    /// Element-wise equality, as ``JSONValue``'s (numbers by value), at any depth.
    public static func == (lhs: JSONArray, rhs: JSONArray) -> Bool {
        JSONValue.array(lhs) == JSONValue.array(rhs)
    }

    /// Hashes as ``JSONValue/array(_:)-enum.case`` of the same elements does.
    public func hash(into hasher: inout Hasher) {
        JSONValue.array(self).hash(into: &hasher)
    }
}

extension JSONArray: Codable {
    /// Decodes a JSON array (see ``JSONValue/init(from:)`` for the depth limit).
    ///
    /// ```swift
    /// let list = try JSONDecoder().decode(JSONArray.self, from: Data("[1, 2]".utf8))
    /// ```
    public init(from decoder: any Decoder) throws {
        guard case .array(let array) = try JSONValue(from: decoder) else {
            throw DecodingError.typeMismatch(
                JSONArray.self,
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "Not a JSON array")
            )
        }
        self = array
    }

    /// Encodes the JSON array (see ``JSONValue/encode(to:)`` for the depth limit).
    ///
    /// ```swift
    /// let data = try JSONEncoder().encode(list)
    /// ```
    public func encode(to encoder: any Encoder) throws {
        try JSONValue.array(self).encode(to: encoder)
    }
}

extension JSONArray: CustomStringConvertible, CustomDebugStringConvertible {
    /// The array as compact JSON text (object members sorted by name).
    ///
    /// ```swift
    /// print(list)   // [1,"two",null]
    /// ```
    public var description: String { JSONValue.array(self).description }

    /// Same as ``description``.
    public var debugDescription: String { description }
}

/// The shared, copy-on-write storage of a ``JSONArray``; its deinit releases nested values
/// iteratively.
final class JSONArrayStorage: @unchecked Sendable {
    // @unchecked Sendable: `elements` is mutated only through `JSONArray.withUniqueElements`, that
    // is, only while a single value references the storage; shared storage is never written.
    var elements: [JSONValue]

    /// The storage of every empty array made by `init()`: never uniquely referenced (this constant
    /// holds it), so never written.
    static let empty = JSONArrayStorage([])

    init(_ elements: [JSONValue]) {
        self.elements = elements
    }

    deinit {
        JSONValue.dismantle(&elements)
    }
}
