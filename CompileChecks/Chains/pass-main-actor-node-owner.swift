// A main-actor object owns a MainActorEventNode as EventNodeOwner owns an EventNode (conforming a
// main-actor owner to EventNodeOwner fails, saying the protocol requires 'eventNode: EventNode'): it
// mounts on its parent owner and its owner-bound subscriptions get @MainActor handlers that
// receive it, `handle` included.
import EventBus

@MainActor final class ListModel: MainActorEventNodeOwner {
    let eventNode = MainActorEventNode(name: "List")
    var taps = 0
    var isEditing = false

    func start() {
        on(Tap.self).next { owner, _ in owner.taps += 1 }
        on(Tap.self).handle { owner, _ in owner.isEditing ? .stop : .continue }
    }
}

@MainActor final class CellModel: MainActorEventNodeOwner {
    let eventNode = MainActorEventNode(name: "Cell")
}

@MainActor func build() -> Bool {
    let list = ListModel()
    let cell = CellModel()
    list.start()
    let mounted = cell.mount(on: list)
    cell.eventNode.post(Tap())
    return mounted
}
