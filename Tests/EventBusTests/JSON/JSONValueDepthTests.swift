import Dispatch
import EventBusJSON
import Foundation
import Testing

@testable import EventBus  // test helpers only (defaultTimeout); JSONValue is used through its public API

/// A `JSONValue` nested 100,000 deep is compared, hashed, described
/// and released without recursion, on a thread with a small stack; coding is bounded by
/// `JSONValue.maximumCodingDepth` and fails with an error instead of overflowing the stack.
@Suite("JSONValue nested deeply", .offThePool)
struct JSONValueDepthTests {
    static let deep = 100_000

    /// `depth` containers around `leaf`, alternating arrays and objects.
    static func nested(_ depth: Int, leaf: JSONValue = .null) -> JSONValue {
        var value = leaf
        for level in 0..<depth {
            value = level % 2 == 0 ? .array([value]) : .object(["k": value])
        }
        return value
    }

    /// `depth` nested JSON arrays around `null`, as text.
    static func nestedText(_ depth: Int) -> Data {
        Data((String(repeating: "[", count: depth) + "null" + String(repeating: "]", count: depth)).utf8)
    }

    /// Runs `body` on a new thread with a 512 KiB stack (a secondary thread's size on Apple
    /// platforms) and waits for it; returns whether it finished. A recursion 100,000 deep would
    /// overflow that stack and crash the test process.
    static func onSmallStack(_ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        let thread = Foundation.Thread {
            body()
            done.signal()
        }
        thread.stackSize = 512 << 10
        thread.start()
        // Alone, each body takes a few seconds even under AddressSanitizer; in the sanitizer stage
        // the whole suite runs in parallel on 2 cores and can starve it for a minute or more.
        let timeout: DispatchTimeInterval = underAddressSanitizer ? .seconds(600) : defaultTimeout
        return done.wait(timeout: .now() + timeout) == .success
    }

    @Test("a value nested 100,000 deep is built and released on a 512 KiB stack")
    func release() {
        let finished = Self.onSmallStack {
            var value: JSONValue? = Self.nested(Self.deep)
            #expect(value != nil)
            value = nil
        }
        #expect(finished)
    }

    @Test("releasing one of two references to a deep value leaves the other intact, shared subtrees too")
    func releaseKeepsSharedValues() {
        let finished = Self.onSmallStack {
            let original = Self.nested(1_000, leaf: "bottom")
            var copy: JSONValue? = original
            #expect(copy != nil)
            copy = nil
            #expect(original == Self.nested(1_000, leaf: "bottom"))

            // A subtree shared with a value that is released.
            var outer: JSONValue? = .array([original, Self.nested(Self.deep)])
            outer = nil
            #expect(original == Self.nested(1_000, leaf: "bottom"))
            #expect(outer == nil)
        }
        #expect(finished)
    }

    @Test("== and hash of values nested 100,000 deep, on a 512 KiB stack")
    func equalityAndHash() {
        let finished = Self.onSmallStack {
            let a = Self.nested(Self.deep, leaf: 1)
            let b = Self.nested(Self.deep, leaf: .double(1.0))  // equal: numbers compare by value
            let c = Self.nested(Self.deep, leaf: 2)  // differs only at the bottom
            #expect(a == b)
            #expect(a != c)
            #expect(a.hashValue == b.hashValue)
            #expect(Set([a, b, c]).count == 2)
            #expect(a.description.count > Self.deep)
        }
        #expect(finished)
    }

    @Test("an object's hash does not depend on member order, and numbers hash by value, at any depth")
    func hashConsistentWithEquality() {
        var forward = JSONObject()
        var backward = JSONObject()
        let keys = (0..<100).map { "key\($0)" }
        for (index, key) in keys.enumerated() { forward[key] = Self.nested(10, leaf: .int(index)) }
        for (index, key) in keys.enumerated().reversed() {
            backward[key] = Self.nested(10, leaf: .double(Double(index)))
        }
        let a = JSONValue.object(forward)
        let b = JSONValue.object(backward)
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(JSONValue.array([1, 2]) != JSONValue.array([2, 1]))
    }

    @Test("decoding rejects input nested deeper than maximumCodingDepth with an error, up to 100,000 deep")
    func decodeRejectsDeepInput() throws {
        let limit = JSONValue.maximumCodingDepth
        let atLimit = try JSONDecoder().decode(JSONValue.self, from: Self.nestedText(limit))
        var depth = 0
        var cursor = atLimit
        while case .array(let elements) = cursor {
            depth += 1
            cursor = elements[0]
        }
        #expect(depth == limit)
        #expect(cursor == .null)
        for tooDeep in [limit + 1, 1_000, Self.deep] {
            #expect(throws: DecodingError.self, "\(tooDeep) levels") {
                try JSONDecoder().decode(JSONValue.self, from: Self.nestedText(tooDeep))
            }
        }
        // Inside another Codable value, the levels above count too.
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(
                JSONEvent.self, from: Data(#"{"id": "x", "payload": "#.utf8) + Self.nestedText(limit) + Data("}".utf8)
            )
        }
    }

    @Test("encoding a value nested deeper than maximumCodingDepth throws; up to the limit it round-trips")
    func encodeBoundedAndRoundTrip() throws {
        let limit = JSONValue.maximumCodingDepth
        let atLimit = Self.nested(limit - 1, leaf: ["text", 2.5, true, nil])  // the leaf is the last level
        let decoded = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(atLimit))
        #expect(decoded == atLimit)
        for tooDeep in [limit + 1, Self.deep] {
            let value = Self.nested(tooDeep)
            #expect(throws: EncodingError.self, "\(tooDeep) levels") { try JSONEncoder().encode(value) }
        }
    }

    @Test(
        "the nested cases still read and build as before: .array/.object from plain collections, literals, pattern matching"
    )
    func sourceCompatibility() throws {
        let plain: [JSONValue] = [1, "two"]
        let members: [String: JSONValue] = ["id": 7]
        let array = JSONValue.array(plain)
        let object = JSONValue.object(members)
        #expect(array == [1, "two"])
        #expect(object == ["id": 7])
        #expect(array[1]?.stringValue == "two")
        #expect(object["id"]?.intValue == 7)

        guard case .array(let elements) = array, case .object(let fields) = object else {
            Issue.record("pattern matching the nested cases failed")
            return
        }
        #expect(elements.count == 2)
        #expect(elements.map(\.description) == ["1", "\"two\""])
        #expect(elements.elements == plain)
        #expect(fields["id"] == 7)
        #expect(fields.members == members)
        #expect(Array(fields.keys) == ["id"])

        // Value semantics: mutating a copy leaves the original alone.
        var copy = elements
        copy.append(nil)
        copy[0] = 3
        #expect(elements == [1, "two"])
        #expect(copy == [3, "two", nil])
        var fieldsCopy = fields
        fieldsCopy["name"] = "Ada"
        #expect(fields.count == 1)
        #expect(fieldsCopy.count == 2)

        let payload: JSONValue = ["b": [1, nil, 2.5], "a": "x\"y"]
        #expect(payload.description == #"{"a":"x\"y","b":[1,null,2.5]}"#)
        let text = String(decoding: try JSONEncoder().encode(JSONEvent(id: "e", payload: payload)), as: UTF8.self)
        #expect(try JSONDecoder().decode(JSONEvent.self, from: Data(text.utf8)).payload == payload)
    }
}
