// MUST NOT COMPILE: a one-argument handler after freeWith(_:), even one that captures nothing:
// owner-bound makers offer only `next { owner, event in }` (write `{ _, event in }` to ignore it).
import EventBus

func wire(bus: EventBus, badge: Badge) {
    bus.on(Ping.self).freeWith(badge).next { ping in print(ping.text) }  // expected-error
}
