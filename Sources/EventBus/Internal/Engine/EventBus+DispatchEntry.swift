extension EventBus {
    /// ``EventBus/dispatch(_:)``'s step into the core: the event passes by address (borrowed in
    /// place, never copied into a box or an existential) with its key. Inlinable, so that where `E`
    /// is known taking the address and reading the key cost nothing, and the bus's generic code
    /// gets both ready.
    @inlinable
    func dispatchByAddress<E: Event>(_ event: E) {
        withUnsafePointer(to: event) { core.dispatch(addressOf: $0, key: event._routingKey, on: self) }
    }
}
