import EventBus

// `onMainActor()` makes any maker the bus's main-actor maker, whose deliveries from another thread
// are enqueued: no `handle`, even on a main-actor node.
@MainActor func stopFromBusMaker(on node: MainActorEventNode) {
    _ = node.on(Tap.self).onMainActor().handle { _ in .stop }  // expected-error
}
