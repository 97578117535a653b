import EventBus

// A plain EventNode delivers on the posting thread: its handlers cannot touch main-actor state.
@MainActor func bind(_ node: EventNode, to model: Model) {
    _ = node.on(Tap.self).next { _ in model.count += 1 }  // expected-error
}
