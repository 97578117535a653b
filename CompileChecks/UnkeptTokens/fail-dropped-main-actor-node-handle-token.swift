// MUST NOT COMPILE with -warnings-as-errors: an unowned `handle` on a main-actor node, as `next`.
import EventBus

@MainActor
func wire(node: MainActorEventNode) {
    node.on(Ping.self).handle { _ in .stop }  // expected-error
}
