import EventBusJSON
import Foundation
import Testing

@testable import EventBus
@testable import EventBusFoundation

@Suite("JSONEvent and JSONValue", .offThePool)
struct JSONEventTests {
    let payload: JSONValue = [
        "userID": "42", "age": 31, "score": 4.5, "verified": true, "roles": ["admin", nil], "meta": [:],
    ]

    @Test("JSONEvent round-trips through Codable and compares by value")
    func codableRoundTrip() throws {
        let event = JSONEvent(id: "user.updated", payload: payload)
        let data = try JSONEncoder().encode(event)
        let decoded = try JSONDecoder().decode(JSONEvent.self, from: data)
        #expect(decoded == event)
        #expect(decoded != JSONEvent(id: "user.updated", payload: ["userID": "43"]))
        #expect(Set([event, decoded]).count == 1)
    }

    @Test("JSONEvent decodes its documented form, and a form with a key missing throws")
    func decodesItsForm() throws {
        let json = #"{"id": "cart.updated", "payload": {"count": 3}}"#
        let event = try JSONDecoder().decode(JSONEvent.self, from: Data(json.utf8))
        #expect(event == JSONEvent(id: "cart.updated", payload: ["count": 3]))
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(JSONEvent.self, from: Data(#"{"id": "x"}"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(JSONEvent.self, from: Data(#"{"payload": 1}"#.utf8))
        }
    }

    @Test("JSONValue decodes arbitrary JSON and keeps int and double apart")
    func decodesJSON() throws {
        let json = #"{"a": [1, 2.5, "x", null, true, {"b": false}]}"#
        let value = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
        #expect(value == ["a": [1, 2.5, "x", nil, true, ["b": false]]])
        #expect(value["a"]?[0]?.intValue == 1)
        #expect(value["a"]?[1]?.doubleValue == 2.5)
        #expect(value["a"]?[9] == nil)
        #expect(value["missing"] == nil)
        #expect(value["a"]?[5]?["b"]?.boolValue == false)
    }

    @Test("Numbers compare by value, so a double written as an integer round-trips")
    func numbersRoundTrip() throws {
        let values: [JSONValue] = [.double(2.0), .double(1e3), .double(2.5), .int(7), .double(-0.0)]
        for value in values {
            let decoded = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
            #expect(decoded == value, "\(value) came back as \(decoded)")
            #expect(decoded.hashValue == value.hashValue)
        }
        #expect(JSONValue.int(2) == .double(2.0))
        #expect(JSONValue.int(2) != .double(2.5))
        #expect(JSONValue.double(.nan) == .double(.nan))
        #expect(Set<JSONValue>([.int(1), .double(1.0), .double(.nan), .double(.nan)]).count == 2)
    }

    @Test("JSONEvent routes by its id through ofType")
    func routesByID() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        _ = bus.on(JSONEvent.self).ofType("cart.updated").next {
            log.append("cart \($0.payload["count"]?.intValue ?? -1)")
        }
        _ = bus.on(JSONEvent.self).next { log.append("any \($0.id)") }

        bus.dispatch(JSONEvent(id: "cart.updated", payload: ["count": 3]))
        bus.dispatch(JSONEvent(id: "user.updated"))

        #expect(log.value == ["cart 3", "any cart.updated", "any user.updated"])
    }
}
