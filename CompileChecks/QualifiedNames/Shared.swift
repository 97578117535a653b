// Declarations shared by every compile check in this directory: an app with types of its own
// named like EventBus's (`Event`, `EventToken`, `DisposeBag`, `JSONValue`).
import EventBus

/// The app's own event type, unrelated to the bus.
struct Event {
    let name: String
}

/// The app's own token and bag types.
struct EventToken {}
final class DisposeBag {}
enum JSONValue {}
