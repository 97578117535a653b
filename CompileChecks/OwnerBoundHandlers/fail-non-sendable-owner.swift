// MUST NOT COMPILE: an owner that is not Sendable cannot be handed to a handler (which may run on
// another thread), and the one-argument form is unavailable on owned makers too: keep the token in
// a DisposeBag the owner holds instead (see pass-owner-passing.swift).
import EventBus

func wire(bus: EventBus, session: Session) {
    bus.on(Ping.self).freeWith(session).next { ping in print(ping.text) }  // expected-error
}
