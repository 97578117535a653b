// MUST COMPILE (warnings as errors): the good forms of actor owners.
import Dispatch
import EventBus

extension UnreadCounter {
    /// Isolated to the actor: its state with no `await`; keys, priority, replay compose.
    func start(on bus: EventBus) {
        bus.on(ChatMessage.self).ofType("room-7").priority(.high).replayingSticky().isolated(to: self)
            .next { counter, _ in counter.count += 1 }
    }
}

actor Archive: EventSubscribing {
    struct Full: Error {}
    var texts: [String] = []

    /// `subscribe(E.self)` inside an actor is isolated to it; a throwing handler's errors go to the
    /// bus's handler-error hook.
    func start() {
        subscribe(ChatMessage.self).next { archive, message in archive.texts.append(message.text) }
        subscribe(ChatMessage.self).ofType("room-9").next { archive, _ throws in
            guard archive.texts.count < 1_000 else { throw Full() }
        }
        // A nonisolated handler is still one step away.
        subscribe(ChatMessage.self).atQueue(DispatchQueue(label: "audit")).next { _, message in print(message.text) }
        // `handle` is the synchronous `subscribe`'s: it runs within the dispatch, so its handler gets
        // the actor nonisolated (its state is out of reach there, a compile error).
        subscribe(ChatMessage.self).ofType("spam").handle { _, _ in .stop }
    }
}

/// From outside the actor, a token; it may be kept, or dropped (the actor ends it).
func wire(bus: EventBus, counter: UnreadCounter) -> EventToken {
    bus.on(ChatMessage.self).monitor().isolated(to: counter).next { counter, _ in counter.count += 1 }
}
