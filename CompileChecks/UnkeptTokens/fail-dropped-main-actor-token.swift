// MUST NOT COMPILE with -warnings-as-errors: the same after onMainActor().
import EventBus

@MainActor
func wire(bus: EventBus) {
    bus.on(Ping.self).onMainActor().next { ping in print(ping.text) }  // expected-error
}
