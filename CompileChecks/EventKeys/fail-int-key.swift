// MUST NOT COMPILE: an Int key would be an unrelated property, leaving the default `nil` key in
// charge, so the event would silently route with no key. Expected: "conformance of 'Int' to
// 'EventRoutingKey' is unavailable".
import EventBus

struct Page: Event {  // expected-error
    let number: Int
    var eventType: Int { number }
}
