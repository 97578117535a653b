import EventBus

struct ChatMessage: Event {
    let room: String
    let text: String
    var eventType: String? { room }
}

actor UnreadCounter {
    var count = 0
}

actor Inbox {
    var messages: [String] = []
}

/// Not Sendable: mutable state with no isolation.
final class Scratch {
    var lines: [String] = []
}
