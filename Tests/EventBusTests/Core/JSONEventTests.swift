import Foundation
import Testing

@testable import EventBus

@Suite("JSONEvent and JSONValue")
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

    @Test("JSONEvent routes by its id through ofType")
    func routesByID() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        bus.on(JSONEvent.self).ofType("cart.updated").next { log.append("cart \($0.payload["count"]?.intValue ?? -1)") }
        bus.on(JSONEvent.self).next { log.append("any \($0.id)") }

        bus.dispatch(JSONEvent(id: "cart.updated", payload: ["count": 3]))
        bus.dispatch(JSONEvent(id: "user.updated"))

        #expect(log.value == ["cart 3", "any cart.updated", "any user.updated"])
    }
}
