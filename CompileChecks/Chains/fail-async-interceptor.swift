import EventBus

// Interceptors decide for the post in progress: they are synchronous.
func enrich(_ node: EventNode) {
    _ = node.intercept(Tap.self) { event async in .forward(event) }  // expected-error
}
