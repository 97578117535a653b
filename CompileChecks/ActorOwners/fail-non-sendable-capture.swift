// MUST NOT COMPILE: the handler runs on the actor, another thread than the one that subscribed: it
// may not capture non-Sendable state. Keep such state in the actor.
import EventBus

func wire(bus: EventBus, counter: UnreadCounter, scratch: Scratch) {
    bus.on(ChatMessage.self).isolated(to: counter).next { _, message in
        scratch.lines.append(message.text)  // expected-error
    }
}
