import EventBus

// Monitors see every event, stopped ones included, and cannot stop.
func stopFromMonitor(_ bus: EventBus) {
    bus.on(Tap.self).monitor().handle { _ in .stop }  // expected-error
}
