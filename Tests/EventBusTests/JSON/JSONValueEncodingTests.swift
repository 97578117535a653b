import EventBusJSON
import Foundation
import Testing

@testable import EventBus

/// `JSONValue(encoding:)`: an `Encodable` value straight to a `JSONValue`, checked against
/// what `JSONDecoder` makes of `JSONEncoder`'s output.
@Suite("JSONValue(encoding:)", .offThePool)
struct JSONValueEncodingTests {
    enum Status: String, Codable { case active, suspended }

    struct Address: Codable {
        let city: String
        let zip: String?
    }

    struct User: Codable {
        let id: Int
        let name: String
        let score: Double
        let ratio: Float
        let verified: Bool
        let status: Status
        let tags: [String]
        let address: Address
        let previous: [Address]
        let nickname: String?
        let counts: [String: Int]
        let byDay: [Int: String]
        let small: Int8
        let big: UInt32
    }

    /// Encodes `value` explicitly, including a `nil` written as `null`, a nested keyed container, a
    /// nested unkeyed one and a super encoder.
    struct Handwritten: Encodable {
        enum Keys: String, CodingKey { case none, point, list, base }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encodeNil(forKey: .none)
            var point = container.nestedContainer(keyedBy: Keys.self, forKey: .point)
            try point.encode(1, forKey: .list)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try list.encode(true)
            try list.encodeNil()
            var inner = list.nestedUnkeyedContainer()
            try inner.encode("x")
            try "base".encode(to: container.superEncoder(forKey: .base))
        }
    }

    static let user = User(
        id: 7, name: "Ada", score: 4.5, ratio: 0.1, verified: true, status: .active, tags: ["a", "b"],
        address: Address(city: "Paris", zip: nil), previous: [Address(city: "Lyon", zip: "69000")],
        nickname: nil, counts: ["x": 1], byDay: [1: "mon"], small: -3, big: 4_000_000_000
    )

    private func viaFoundation(_ value: some Encodable) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }

    @Test("a struct with nested structs, arrays, optionals, enums and dictionaries, as JSONEncoder")
    func structs() throws {
        let value = try JSONValue(encoding: Self.user)
        #expect(value == (try viaFoundation(Self.user)))
        #expect(value["address"]?["city"]?.stringValue == "Paris")
        #expect(value["address"]?["zip"] == nil)  // a nil optional is left out
        #expect(value["nickname"] == nil)
        #expect(value["status"]?.stringValue == "active")
        #expect(value["previous"]?[0]?["zip"]?.stringValue == "69000")
        #expect(value["byDay"]?["1"]?.stringValue == "mon")
        #expect(value["ratio"]?.doubleValue == 0.1)  // the Float's decimal form, as JSON text reads back
        #expect(value["big"]?.intValue == 4_000_000_000)
    }

    @Test("top-level scalars, arrays, dictionaries and JSONValue itself")
    func topLevel() throws {
        #expect(try JSONValue(encoding: 3) == .int(3))
        #expect(try JSONValue(encoding: "s") == .string("s"))
        #expect(try JSONValue(encoding: [1, 2]) == [1, 2])
        #expect(try JSONValue(encoding: ["k": [true]]) == ["k": [true]])
        #expect(try JSONValue(encoding: [Int?.none, 1]) == [nil, 1])
        let json: JSONValue = ["a": [1, 2.5, nil]]
        #expect(try JSONValue(encoding: json) == json)
        #expect(try JSONValue(encoding: ["nested": json]) == ["nested": json])
    }

    @Test("explicit nil, nested containers and super encoders land where the keys say")
    func handwritten() throws {
        let value = try JSONValue(encoding: Handwritten())
        #expect(value == ["none": nil, "point": ["list": 1], "list": [true, nil, ["x"]], "base": "base"])
        #expect(value == (try viaFoundation(Handwritten())))
    }

    @Test("values JSON cannot hold throw EncodingError, never crash")
    func invalidValues() {
        #expect(throws: EncodingError.self) { try JSONValue(encoding: Double.nan) }
        #expect(throws: EncodingError.self) { try JSONValue(encoding: ["x": Double.infinity]) }
        #expect(throws: EncodingError.self) { try JSONValue(encoding: [Float.nan]) }
        #expect(throws: EncodingError.self) { try JSONValue(encoding: UInt64.max) }
        #expect(throws: EncodingError.self) { try JSONValue(encoding: Empty()) }
    }

    struct Empty: Encodable {
        func encode(to encoder: any Encoder) throws {}
    }

    /// A list nested `depth` levels deep through keyed containers.
    final class Chain: Encodable {
        let next: Chain?
        init(depth: Int) { next = depth > 0 ? Chain(depth: depth - 1) : nil }
    }

    @Test("nesting is bounded by maximumCodingDepth: deeper throws instead of overflowing the stack")
    func depthBound() throws {
        let fits = try JSONValue(encoding: Chain(depth: JSONValue.maximumCodingDepth - 1))
        var depth = 0
        var cursor: JSONValue? = fits
        while let next = cursor?["next"] {
            depth += 1
            cursor = next
        }
        #expect(depth == JSONValue.maximumCodingDepth - 1)
        #expect(throws: EncodingError.self) { try JSONValue(encoding: Chain(depth: 10_000)) }
    }

    @Test("a JSONValue met while encoding is taken as it is, deeper than maximumCodingDepth too")
    func jsonValuesPassThrough() throws {
        var deep = JSONValue.int(1)
        for _ in 0..<1_000 { deep = .array([deep]) }
        #expect(try JSONValue(encoding: deep) == deep)
        #expect(try JSONValue(encoding: ["deep": deep]) == .object(["deep": deep]))
    }

    @Test("variables in literals: the enum cases, or JSONValue(encoding:) for whole values")
    func variablesInLiterals() throws {
        let count = 3
        let user = "42"
        let tags = ["a", "b"]
        let payload: JSONValue = ["count": .int(count), "user": .string(user), "tags": try JSONValue(encoding: tags)]
        #expect(payload == ["count": 3, "user": "42", "tags": ["a", "b"]])
    }
}
