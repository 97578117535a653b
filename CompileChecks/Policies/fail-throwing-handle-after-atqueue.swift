import Dispatch
import EventBus

// A throwing `handle` gets the same message: the style, not the handler's shape, decides.
func stopFromQueueThrowing(_ bus: EventBus) {
    bus.on(Tap.self).atQueue(.global()).handle { _ throws in .stop }  // expected-error
}
