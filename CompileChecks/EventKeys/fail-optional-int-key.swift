// MUST NOT COMPILE: an Int? key, likewise. Expected: "conformance of 'Int' to 'EventRoutingKey' is
// unavailable".
import EventBus

struct MaybePage: Event {  // expected-error
    let number: Int?
    var eventType: Int? { number }
}
