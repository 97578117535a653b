import EventBus

// The delivery mode belongs to the chain: a plain node cannot be mounted on a main-actor one.
@MainActor func mix(_ plain: EventNode, _ main: MainActorEventNode) {
    plain.mount(on: main)  // expected-error
}
