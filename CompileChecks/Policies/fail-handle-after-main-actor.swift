import EventBus

// A main-actor handler off the main thread is enqueued: it cannot decide either.
func stopFromMainActor(_ bus: EventBus) {
    bus.on(Tap.self).onMainActor().handle { _ in .stop }  // expected-error
}
