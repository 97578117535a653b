import EventBus

// A main-actor node's `handle` decides within the post: it is synchronous.
@MainActor func stopLater(on node: MainActorEventNode) {
    _ = node.on(Tap.self).handle { _ async in .stop }  // expected-error
}
