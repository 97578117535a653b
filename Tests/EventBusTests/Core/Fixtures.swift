@testable import EventBus
@testable import EventBusFoundation

// Event and owner types shared by the core suites.

struct Ping: Event { var value = 0 }
struct Pong: Event { var value = 0 }
struct Box<Payload: Sendable>: Event { var payload: Payload }

struct Chat: Event {
    var room: String?
    var text = ""
    var eventType: String? { room }
}

/// An owner whose handlers record what they saw.
final class Screen: EventSubscribing, @unchecked Sendable {
    // @unchecked Sendable: `log` is a `Shared`, which locks; `name` is immutable.
    let name: String
    let log: Shared<[String]>

    init(_ name: String, log: Shared<[String]>) {
        self.name = name
        self.log = log
    }
}
