// MUST NOT COMPILE: the handler is isolated to the counter, not to the inbox: touching the inbox's
// state needs an `await` (send it an event, or call one of its methods in a Task).
import EventBus

func wire(bus: EventBus, counter: UnreadCounter, inbox: Inbox) {
    bus.on(ChatMessage.self).isolated(to: counter).next { counter, message in
        counter.count += 1
        inbox.messages.append(message.text)  // expected-error
    }
}
