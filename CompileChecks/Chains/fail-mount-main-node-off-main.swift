import EventBus

// A main-actor tree is changed on the main actor.
func attach(_ cell: MainActorEventNode, to list: MainActorEventNode) {
    cell.mount(on: list)  // expected-error
}
