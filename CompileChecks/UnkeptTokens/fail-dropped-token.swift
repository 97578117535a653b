// MUST NOT COMPILE with -warnings-as-errors: an unowned subscription whose token is dropped lives
// as long as the bus (the contract), so the call site gets a warning, "result of call to 'next' is
// unused". Write `_ =` when that is what you mean.
import EventBus

func wire(bus: EventBus) {
    bus.on(Ping.self).next { ping in print(ping.text) }  // expected-error
}
