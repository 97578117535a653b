// Declarations shared by every compile check in this directory (type-checked with each one).
import EventBus

struct Ping: Event {
    let text: String
}

/// A Sendable owner whose handlers run on any thread: it may own owner-passing handlers.
final class Badge: EventSubscribing, Sendable {
    func show(_ ping: Ping) { print(ping.text) }
}

/// A main-actor owner, as a view controller or a view model is.
@MainActor
final class InboxModel: EventSubscribing {
    var last = ""
}

/// An owner that is not Sendable: it can bound a subscription's life, not be handed to a handler.
final class Session {
    var count = 0
}
