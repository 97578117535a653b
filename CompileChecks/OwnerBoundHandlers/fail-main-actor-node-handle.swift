// MUST NOT COMPILE: an owner-bound `handle` on a main-actor node that captures `self` leaks the
// same way; use `handle { owner, event in … }`.
import EventBus

@MainActor
final class DrawerModel {
    let eventNode = MainActorEventNode(name: "Drawer")
    var isOpen = false

    func start() {
        eventNode.on(Ping.self).freeWith(self).handle { _ in self.isOpen ? .stop : .continue }  // expected-error
    }
}
