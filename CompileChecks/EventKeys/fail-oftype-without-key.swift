// MUST NOT COMPILE (with -warnings-as-errors; a warning otherwise): `ofType` on an event type that
// declares no `eventType` would make a subscriber that never receives anything (issue 32: the
// README's `ofType("42")` on `LoginEvent` compiled and silently never matched). Expected:
// "'ofType' is deprecated: this event type declares no 'eventType'…".
import EventBus

struct LoginEvent: Event {
    let userID: String
}

func subscribeToOneUser(_ bus: EventBus) -> EventToken {
    bus.on(LoginEvent.self).ofType("42").next { _ in }  // expected-error
}
