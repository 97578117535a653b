// MUST NOT COMPILE with -warnings-as-errors: the same after atQueue(_:) and ofType(_:).
import Dispatch
import EventBus

func wire(bus: EventBus, queue: DispatchQueue) {
    bus.on(Ping.self).atQueue(queue).ofType("k").next { ping in print(ping.text) }  // expected-error
}
