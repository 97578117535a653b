import EventBus

// The owner-passing form says the same: a main-actor handler may run after the dispatch.
@MainActor final class Drawer: EventSubscribing {
    var isOpen = true
    func start(_ bus: EventBus) {
        let maker = bus.on(Tap.self).onMainActor().freeWith(self)
        maker.handle { owner, _ in owner.isOpen ? .stop : .continue }  // expected-error
    }
}
