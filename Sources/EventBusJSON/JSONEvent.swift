public import EventBus

/// A weakly typed event: an id, which is its ``eventType``, and a JSON payload.
///
/// For modules that must not import each other's event types: they agree on ids and JSON
/// instead, as with notifications, but the payload is a `Sendable`, `Codable`, `Hashable`
/// ``JSONValue`` rather than `[String: Any]`. Subscribe to one id with `ofType`.
///
/// ```swift
/// let token = bus.on(JSONEvent.self).ofType("cart.updated").next { event in
///     print(event.payload["count"]?.intValue ?? 0)
/// }
/// bus.dispatch(JSONEvent(id: "cart.updated", payload: ["count": 3]))
/// ```
public struct JSONEvent: Event, Hashable, Codable {
    /// The event's name; subscribers pick it with `ofType(id)`.
    public var id: String
    /// The event's data.
    public var payload: JSONValue

    /// Creates an event named `id` carrying `payload` (`null` by default).
    ///
    /// ```swift
    /// JSONEvent(id: "cart.updated", payload: ["count": 3])
    /// ```
    public init(id: String, payload: JSONValue = .null) {
        self.id = id
        self.payload = payload
    }

    /// The id: JSON events are routed by it.
    public var eventType: String? { id }

    /// Decodes an event from its `Codable` form, the object `{"id": …, "payload": …}` that encoding
    /// one writes; throws `DecodingError` when a key is missing or the payload is not JSON.
    ///
    /// ```swift
    /// let data = Data(#"{"id":"cart.updated","payload":{"count":3}}"#.utf8)
    /// let event = try JSONDecoder().decode(JSONEvent.self, from: data)   // id "cart.updated"
    /// ```
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            payload: try container.decode(JSONValue.self, forKey: .payload))
    }
}
