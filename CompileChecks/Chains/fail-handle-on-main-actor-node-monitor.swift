import EventBus

// A main-actor node's `handle` decides for the post in progress; its monitors see every event and
// cannot stop (`monitor()` makes it the bus's main-actor maker, which offers `next` only).
@MainActor func stopFromMonitor(on node: MainActorEventNode) {
    _ = node.on(Tap.self).monitor().handle { _ in .stop }  // expected-error
}
