// MUST NOT COMPILE: an actor-isolated handler runs after the dispatch, on its actor: it cannot stop
// the dispatch, so `handle` is unavailable, with a message that says so.
import EventBus

func wire(bus: EventBus, counter: UnreadCounter) {
    bus.on(ChatMessage.self).isolated(to: counter).handle { _, _ in .stop }  // expected-error
}
