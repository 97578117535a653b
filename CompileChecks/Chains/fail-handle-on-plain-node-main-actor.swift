import EventBus

// A plain node's post runs on the posting thread: its main-actor subscribers may be enqueued, so
// they cannot stop it.
@MainActor func stopOnMain(on node: EventNode) {
    _ = node.on(Tap.self).onMainActor().handle { _ in .stop }  // expected-error
}
