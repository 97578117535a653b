// MUST NOT COMPILE, with the Event diagnostic: "requires that 'Int' conform to 'Event'".
import EventBus
import EventBusFoundation

func send(bus: EventBus) {
    bus.dispatch(42)  // expected-error
}
