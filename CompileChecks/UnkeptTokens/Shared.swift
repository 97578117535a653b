// Declarations shared by every compile check in this directory (type-checked with each one).
import EventBus

struct Ping: Event {
    let text: String
    var eventType: String { text }  // a key, so that the checks may use ofType
}

final class Badge: EventSubscribing, Sendable {
    func show(_ ping: Ping) { print(ping.text) }
}
