// MUST NOT COMPILE: `atQueue(.main)` runs on the main queue at run time, but its handler is not
// main-actor isolated, so the compiler rightly refuses main-actor state there: use onMainActor().
// Expected: an actor-isolation error on the assignment.
import Dispatch
import EventBus

@MainActor
func wire(bus: EventBus, model: ProfileViewModel) {
    bus.on(ProfileRenamed.self).atQueue(.main).next { event in
        model.title = event.name  // expected-isolation-error
    }
}
