import Dispatch
import EventBus

// After `atQueue`, a main-actor node's subscriber is enqueued: it runs too late to decide.
@MainActor func stopFromQueue(on node: MainActorEventNode) {
    _ = node.on(Tap.self).atQueue(.global()).handle { _ in .stop }  // expected-error
}
