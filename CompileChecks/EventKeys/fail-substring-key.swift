// MUST NOT COMPILE: a Substring key (for example a slice of a path). Expected: "conformance of
// 'Substring' to 'EventRoutingKey' is unavailable".
import EventBus

struct PathChanged: Event {  // expected-error
    let path: String
    var eventType: Substring { path.prefix(4) }
}
