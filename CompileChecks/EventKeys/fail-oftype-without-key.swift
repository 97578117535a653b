// MUST NOT COMPILE (with -warnings-as-errors; a warning otherwise): `ofType` on an event type that
// declares no `eventType` would make a subscriber that never receives anything (`ofType("42")` on
// a `LoginEvent` with no key would compile and silently never match). Expected:
// "'ofType' is deprecated: this event type declares no 'eventType'…".
import EventBus

struct LoginEvent: Event {
    let userID: String
}

func subscribeToOneUser(_ bus: EventBus) -> EventToken {
    bus.on(LoginEvent.self).ofType("42").next { _ in }  // expected-error
}
