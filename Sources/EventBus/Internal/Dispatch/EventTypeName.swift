/// How introspection, traces and errors name an event type: `String(reflecting:)`, except for the
/// types a chain node registers interceptors and answerers under, which are named after what they
/// carry (`intercept(MyApp.Liked)`, `answer(MyApp.FetchName)`).
func eventTypeName(_ type: Any.Type) -> String {
    if let slot = type as? any ChainSlotType.Type { return slot.slotName }
    return String(reflecting: type)
}

/// A type under which a chain node registers interceptors or answerers on its registry.
protocol ChainSlotType {
    /// How introspection names the slot: what it intercepts or answers.
    static var slotName: String { get }
}
