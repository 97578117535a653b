// MUST NOT COMPILE: a @MainActor owner capturing `self` in an onMainActor() handler leaks the same
// way; use `onMainActor().next { owner, event in owner.… }`.
import EventBus

extension InboxModel {
    func start() {
        subscribe(Ping.self).onMainActor().next { ping in self.last = ping.text }  // expected-error
    }
}
