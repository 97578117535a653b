// Declarations shared by every compile check in this directory (type-checked with each one).
import EventBus

/// Dispatches `event` on a fresh bus to a subscriber of `key`; whether the key routes is checked by
/// the tests (Tests/EventBusTests/Core/EventKeyTests.swift), these files only have to compile.
func route<E: Event>(_ event: E, to key: String) {
    let bus = EventBus()
    _ = bus.on(E.self).ofType(key).next { _ in }
    bus.dispatch(event)
}
