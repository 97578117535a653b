// MUST NOT COMPILE: the owner-passing `next` without `onMainActor()` touches a @MainActor owner.
// Expected: an actor-isolation error on the assignment.
import EventBus

extension ProfileViewModel {
    func start(bus: EventBus) {
        subscribe(ProfileRenamed.self, on: bus).next { owner, event in
            owner.title = event.name  // expected-isolation-error
        }
    }
}
