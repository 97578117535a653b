// MUST NOT COMPILE: a Notification is posted with `post(_:)`, not dispatched; the diagnostic is the
// Event one ("requires that 'Notification' conform to 'Event'").
import EventBus
import EventBusFoundation
import Foundation

func send(bus: EventBus) {
    bus.dispatch(Notification(name: Notification.Name("n")))  // expected-error
}
