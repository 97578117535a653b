// MUST COMPILE: the same handlers, made with onMainActor(), are @MainActor and may touch
// main-actor state; this is the positive counterpart of the fail-*.swift files.
import EventBus

extension ProfileViewModel {
    func start(bus: EventBus) {
        // Owner-passing form for a @MainActor owner.
        subscribe(ProfileRenamed.self, on: bus).onMainActor().next { owner, event in
            owner.title = event.name
        }
        // ofType chains on it, before or after onMainActor().
        subscribe(ProfileRenamed.self, on: bus).ofType("me").onMainActor().ofType("you").next { owner, event in
            owner.title = event.name
        }
    }
}

@MainActor
func wire(bus: EventBus, model: ProfileViewModel) -> EventToken {
    bus.on(ProfileRenamed.self).onMainActor().next { event in
        model.title = event.name
    }
}

// Registering is not isolated: a background component may wire a main-actor handler too.
func wireFromAnywhere(bus: EventBus, model: ProfileViewModel) {
    bus.on(ProfileRenamed.self).onMainActor().freeWith(model).next { model, event in
        model.title = event.name
    }
}
