// MUST NOT COMPILE: a plain (nonisolated, @Sendable) `next` handler writes main-actor state.
// Expected: an actor-isolation error on the assignment.
import EventBus

@MainActor
func wire(bus: EventBus, model: ProfileViewModel) {
    bus.on(ProfileRenamed.self).next { event in
        model.title = event.name  // expected-isolation-error
    }
}
