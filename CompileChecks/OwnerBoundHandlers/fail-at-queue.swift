// MUST NOT COMPILE: the same after atQueue(_:), in either order of the chain.
import Dispatch
import EventBus

extension Badge {
    func start(queue: DispatchQueue) {
        subscribe(Ping.self).atQueue(queue).next { ping in self.show(ping) }  // expected-error
    }
}
