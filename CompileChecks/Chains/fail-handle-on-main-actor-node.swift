import EventBus

// A main-actor chain's makers are the bus's main-actor makers: `next`, never `handle` (to consume
// an event there, intercept and drop it).
@MainActor func stop(on node: MainActorEventNode) {
    _ = node.on(Tap.self).handle { _ in .stop }  // expected-error
}
