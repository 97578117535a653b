// MUST NOT COMPILE: the handler of an owner-bound subscription captures `self` strongly, which
// would keep the owner (and the subscription) alive forever. Expected:
// "'next' is unavailable: an owner-bound handler receives its owner…".
import EventBus

extension Badge {
    func start() {
        subscribe(Ping.self).next { ping in self.show(ping) }  // expected-error
    }
}
