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
///
/// ## Deeply nested values
///
/// A value may be nested to any depth — `.array([.array([…])])` a million levels deep — and still be
/// compared (`==`), hashed, described and released safely on any thread, whatever its stack size:
/// none of these recurse. Releasing is the hard one, since Swift destroys an enum's payload
/// recursively and offers no hook into it; so the nested cases hold a ``JSONArray`` or a
/// ``JSONObject``, collection types over a shared storage object whose `deinit` takes the nested
/// values apart with an explicit stack. (Bounding the depth instead would only protect values that
/// were decoded: a value built with the `.array` case cannot be checked, and releasing one more
/// than a few thousand levels deep would overflow the stack.)
///
/// Encoding and decoding, by contrast, recurse through the coder, one level of the coder's own
/// code per level of nesting, so they are bounded: at most ``maximumCodingDepth`` nested arrays
/// and objects, counted from the root of the document (`codingPath`). Deeper input makes
/// `init(from:)` throw `DecodingError.dataCorrupted`, and a deeper value makes `encode(to:)` throw
/// `EncodingError.invalidValue`, instead of overflowing the stack. (The limit relies on the coder
/// keeping `codingPath` up to date, as the standard JSON and property-list coders do.)
public enum JSONValue: Sendable {
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
    /// An ordered list of values; `.array([1, 2])` also accepts a `[JSONValue]`.
    case array(JSONArray)
    /// Members by name; member order is not kept. `.object(["id": 1])` also accepts a
    /// `[String: JSONValue]`.
    case object(JSONObject)

    /// An array of `elements`: the `.array` case, from a plain Swift array.
    ///
    /// ```swift
    /// let roles: [JSONValue] = ["admin"]
    /// let value = JSONValue.array(roles)
    /// ```
    public static func array(_ elements: [JSONValue]) -> JSONValue {
        .array(JSONArray(elements))
    }

    /// An object with `members`: the `.object` case, from a plain Swift dictionary.
    ///
    /// ```swift
    /// let fields: [String: JSONValue] = ["id": 1]
    /// let value = JSONValue.object(fields)
    /// ```
    public static func object(_ members: [String: JSONValue]) -> JSONValue {
        .object(JSONObject(members))
    }

    /// The deepest nesting of arrays and objects that `init(from:)` accepts and `encode(to:)`
    /// writes, counted from the root of the document being coded.
    ///
    /// Coders recurse once per level: with `JSONEncoder` and `JSONDecoder` a level takes about
    /// 3.5 KiB of stack in a debug build (measured on Linux), so 64 levels take about 230 KiB,
    /// under half of a 512 KiB secondary thread (Apple platforms' default). Real payloads are
    /// rarely more than 10 deep.
    ///
    /// ```swift
    /// JSONValue.maximumCodingDepth   // 64
    /// ```
    public static let maximumCodingDepth = 64

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

    /// Whether this is an array or an object.
    var isContainer: Bool {
        switch self {
        case .array, .object: true
        default: false
        }
    }
}

// MARK: - Literals

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
    public init(arrayLiteral elements: JSONValue...) { self = .array(JSONArray(elements)) }
    /// `let value: JSONValue = ["id": 1]`; a key given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(Dictionary(elements, uniquingKeysWith: { _, last in last })))
    }
}

// MARK: - Equality and hashing, iterative

extension JSONValue: Hashable {
    /// Equal values, with numbers compared by value: `.int(2) == .double(2.0)`, and NaN equals NaN.
    ///
    /// Iterative: values nested to any depth compare without recursion.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        if let equal = shallowlyEqual(lhs, rhs) { return equal }
        // Pairs of containers of the same kind still to compare, element by element.
        var pending: [(JSONValue, JSONValue)] = [(lhs, rhs)]
        while let (left, right) = pending.popLast() {
            switch (left, right) {
            case (.array(let a), .array(let b)):
                if a.storage === b.storage { continue }
                guard a.count == b.count else { return false }
                for (x, y) in zip(a, b) {
                    switch shallowlyEqual(x, y) {
                    case false?: return false
                    case true?: continue
                    case nil: pending.append((x, y))
                    }
                }
            case (.object(let a), .object(let b)):
                if a.storage === b.storage { continue }
                guard a.count == b.count else { return false }
                for (key, x) in a.storage.members {
                    guard let y = b.storage.members[key] else { return false }
                    switch shallowlyEqual(x, y) {
                    case false?: return false
                    case true?: continue
                    case nil: pending.append((x, y))
                    }
                }
            default:
                return false  // not reached: only pairs of containers of one kind are pending
            }
        }
        return true
    }

    /// Whether `lhs == rhs`, when that can be told without looking inside containers; `nil` for
    /// two arrays or two objects.
    private static func shallowlyEqual(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool? {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.double(let a), .double(let b)): a == b || (a.isNaN && b.isNaN)
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): Int(exactly: b) == a
        case (.array, .array), (.object, .object): nil
        default: false
        }
    }

    /// Hashes consistently with `==`: an integral `.double` hashes as the `.int` it equals, and an
    /// object's members in any order hash alike.
    ///
    /// Iterative: values nested to any depth hash without recursion.
    public func hash(into hasher: inout Hasher) {
        if isContainer {
            hasher.combine(Self.digest(ofContainer: self))
        } else {
            hashScalar(into: &hasher)
        }
    }

    /// Feeds a value that is not a container.
    private func hashScalar(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let value):
            hasher.combine(1)
            hasher.combine(value)
        case .int(let value):
            hasher.combine(2)
            hasher.combine(value)
        case .double(let value):
            if let integral = Int(exactly: value) {
                hasher.combine(2)
                hasher.combine(integral)
            } else {
                hasher.combine(3)
                hasher.combine(value.isNaN ? .nan : value)
            }
        case .string(let value):
            hasher.combine(4)
            hasher.combine(value)
        case .array, .object: preconditionFailure("JSONValue: a container hashed as a scalar")
        }
    }

    /// A hash of a container and everything in it, computed bottom-up with an explicit stack.
    ///
    /// An array feeds its elements in order into one hasher (a nested container as its digest);
    /// an object combines its members' hashes with XOR, as `Dictionary` does, so that member order
    /// does not matter.
    private static func digest(ofContainer root: JSONValue) -> Int {
        var stack = [DigestFrame(root, key: nil)]
        while true {
            let top = stack.count - 1
            if let (key, child) = stack[top].nextChild() {
                if child.isContainer {
                    stack.append(DigestFrame(child, key: key))
                } else {
                    stack[top].add(scalar: child, key: key)
                }
                continue
            }
            let finished = stack.removeLast()
            let digest = finished.finalize()
            guard !stack.isEmpty else { return digest }
            stack[stack.count - 1].add(digest: digest, key: finished.key)
        }
    }

    /// One container being hashed by ``digest(ofContainer:)``.
    private struct DigestFrame {
        enum Position {
            case array(JSONArray, next: Int)
            case object(JSONObject, next: JSONObject.Index)
        }

        var position: Position
        /// The name under which the parent object holds this container (`nil` in an array or at the root).
        let key: String?
        /// Arrays: everything so far, in order.
        var hasher = Hasher()
        /// Objects: the XOR of the members' hashes.
        var members = 0

        init(_ container: JSONValue, key: String?) {
            self.key = key
            switch container {
            case .array(let array):
                position = .array(array, next: 0)
                hasher.combine(5)
                hasher.combine(array.count)
            case .object(let object):
                position = .object(object, next: object.startIndex)
            default:
                preconditionFailure("JSONValue: a scalar hashed as a container")
            }
        }

        /// The next element (with its name, in an object), or `nil` when all were visited.
        mutating func nextChild() -> (key: String?, value: JSONValue)? {
            switch position {
            case .array(let array, let next):
                guard next < array.endIndex else { return nil }
                position = .array(array, next: next + 1)
                return (nil, array[next])
            case .object(let object, let next):
                guard next < object.endIndex else { return nil }
                position = .object(object, next: object.index(after: next))
                let member = object[next]
                return (member.key, member.value)
            }
        }

        mutating func add(scalar: JSONValue, key: String?) {
            switch position {
            case .array:
                scalar.hashScalar(into: &hasher)
            case .object:
                var member = Hasher()
                member.combine(key)
                scalar.hashScalar(into: &member)
                members ^= member.finalize()
            }
        }

        mutating func add(digest: Int, key: String?) {
            switch position {
            case .array:
                hasher.combine(7)
                hasher.combine(digest)
            case .object:
                var member = Hasher()
                member.combine(key)
                member.combine(7)
                member.combine(digest)
                members ^= member.finalize()
            }
        }

        func finalize() -> Int {
            switch position {
            case .array:
                return hasher.finalize()
            case .object(let object, _):
                var hasher = Hasher()
                hasher.combine(6)
                hasher.combine(object.count)
                hasher.combine(members)
                return hasher.finalize()
            }
        }
    }
}

// MARK: - Release, iterative

extension JSONValue {
    /// Empties `elements` without recursion: nested containers that only `elements` holds are
    /// taken apart here, with an explicit stack, rather than by their own storage's deinit. Called
    /// by the storages' deinits.
    static func dismantle(_ elements: inout [JSONValue]) {
        guard elements.contains(where: { $0.isContainer }) else { return }
        var stack = elements.filter { $0.isContainer }
        elements = []
        dismantle(stack: &stack)
    }

    /// Empties `members` without recursion; see ``dismantle(_:)-([JSONValue])``.
    static func dismantle(_ members: inout [String: JSONValue]) {
        guard members.values.contains(where: { $0.isContainer }) else { return }
        var stack = members.values.filter { $0.isContainer }
        members = [:]
        dismantle(stack: &stack)
    }

    /// Releases the containers in `stack`. A storage that the stack held the last reference to is
    /// emptied first, its nested containers pushed, so that it dies with nothing nested left in it.
    private static func dismantle(stack: inout [JSONValue]) {
        while let top = stack.indices.last {
            // Take the storage out, then drop the stack's reference: if it was the last one, the
            // local is now the only reference. (Not a `switch` with bindings: its subject and
            // bindings would be extra references while the uniqueness is checked.)
            var array = stack[top].arrayStorage
            var object = stack[top].objectStorage
            stack.removeLast()
            if isKnownUniquelyReferenced(&array) {
                for element in array!.elements where element.isContainer { stack.append(element) }
                array!.elements = []
            }
            if isKnownUniquelyReferenced(&object) {
                for element in object!.members.values where element.isContainer { stack.append(element) }
                object!.members = [:]
            }
            // `array` or `object`, now empty (or still referenced elsewhere), is released here.
        }
    }

    private var arrayStorage: JSONArrayStorage? {
        if case .array(let array) = self { array.storage } else { nil }
    }

    private var objectStorage: JSONObjectStorage? {
        if case .object(let object) = self { object.storage } else { nil }
    }
}

// MARK: - Codable, depth-bounded

extension JSONValue: Codable {
    /// Decodes `null`, a Boolean, an integer, a floating-point number, a string, an array or an
    /// object, at most ``maximumCodingDepth`` arrays and objects deep.
    ///
    /// Throws `DecodingError.dataCorrupted` for deeper input (see "Deeply nested values").
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
        } else {
            // An array or an object: one more level of the decoder's recursion.
            guard decoder.codingPath.count < Self.maximumCodingDepth else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: decoder.codingPath,
                        debugDescription:
                            "JSONValue: arrays and objects nested deeper than \(Self.maximumCodingDepth) levels"
                    )
                )
            }
            // Only a type mismatch means "not this kind": anything else (too deep inside) is the error.
            do {
                self = .array(JSONArray(try container.decode([JSONValue].self)))
                return
            } catch DecodingError.typeMismatch {}
            do {
                self = .object(JSONObject(try container.decode([String: JSONValue].self)))
                return
            } catch DecodingError.typeMismatch {}
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value")
        }
    }

    /// Encodes the value as the JSON it stands for, if it is at most ``maximumCodingDepth`` arrays
    /// and objects deep.
    ///
    /// Throws `EncodingError.invalidValue` for a deeper value (see "Deeply nested values").
    ///
    /// ```swift
    /// let data = try JSONEncoder().encode(payload)
    /// ```
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if isContainer, encoder.codingPath.count >= Self.maximumCodingDepth {
            throw EncodingError.invalidValue(
                self,
                EncodingError.Context(
                    codingPath: encoder.codingPath,
                    debugDescription:
                        "JSONValue: arrays and objects nested deeper than \(Self.maximumCodingDepth) levels"
                )
            )
        }
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value.elements)
        case .object(let value): try container.encode(value.members)
        }
    }
}

// MARK: - Description, iterative

extension JSONValue: CustomStringConvertible, CustomDebugStringConvertible {
    /// The value as compact JSON text, object members sorted by name (NaN and infinities are
    /// written as Swift prints them). Iterative: any depth.
    ///
    /// ```swift
    /// let value: JSONValue = ["b": [1, nil], "a": "x"]
    /// print(value)   // {"a":"x","b":[1,null]}
    /// ```
    public var description: String {
        enum Step {
            case value(JSONValue)
            case text(String)
        }
        var text = ""
        var steps: [Step] = [.value(self)]
        while let step = steps.popLast() {
            switch step {
            case .text(let piece):
                text += piece
            case .value(.null): text += "null"
            case .value(.bool(let value)): text += value ? "true" : "false"
            case .value(.int(let value)): text += String(value)
            case .value(.double(let value)): text += String(describing: value)
            case .value(.string(let value)): text += Self.quoted(value)
            case .value(.array(let array)):
                // Pushed in reverse: the first element is popped first.
                text += "["
                steps.append(.text("]"))
                for (offset, element) in array.enumerated().reversed() {
                    steps.append(.value(element))
                    if offset > 0 { steps.append(.text(",")) }
                }
            case .value(.object(let object)):
                text += "{"
                steps.append(.text("}"))
                for (offset, key) in object.keys.sorted().enumerated().reversed() {
                    steps.append(.value(object[key]!))
                    steps.append(.text(Self.quoted(key) + ":"))
                    if offset > 0 { steps.append(.text(",")) }
                }
            }
        }
        return text
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// `string` as a JSON string literal.
    private static func quoted(_ string: String) -> String {
        var quoted = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                quoted += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }
}
