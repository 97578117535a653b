import Dispatch
import EventBus

// `handle` decides for the dispatch in progress: a queued handler runs too late to decide.
func stopFromQueue(_ bus: EventBus) {
    bus.on(Tap.self).atQueue(.global()).handle { _ in .stop }  // expected-error
}
