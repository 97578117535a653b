import Dispatch
import Testing

@testable import EventBus

/// The ports of greenrobot EventBus's (Android) test classes, one suite per Java class, and the
/// delivery-policy edge cases found beside them: `swift test --filter Greenrobot` runs them all.
@Suite("Greenrobot ports and policy edge cases", .offThePool)
enum Greenrobot {}

// What greenrobot's `AbstractEventBusTest` gives its subclasses, for the ports in this folder: an
// event counter, the last event, and a String-like event (greenrobot posts plain `String`s, which
// in Swift must be an `Event` type).

/// Greenrobot's `trackEvent`: counts events and remembers the last one (thread-safe).
final class GreenrobotTracker: Sendable {
    private let state = Shared<(count: Int, last: String?)>((0, nil))

    /// `eventCount`.
    var eventCount: Int { state.value.count }
    /// `lastEvent`, as its description (`nil` before any).
    var lastEvent: String? { state.value.last }

    func track(_ event: some Sendable) {
        let description = String(describing: event)
        state.withLock { state in
            state.count += 1
            state.last = description
        }
    }

    /// Greenrobot's `waitForEventCount`: polls until `count` events were tracked (with a timeout).
    @discardableResult
    func waitForEventCount(_ count: Int, timeout: DispatchTimeInterval = defaultTimeout) -> Bool {
        waitUntil(timeout: timeout) { eventCount >= count }
    }
}

/// Greenrobot's `String` events ("42", "Sticky", "Foo"); its description is the text, so
/// `lastEvent` reads as in the Java tests.
struct StringEvent: Event, CustomStringConvertible, Equatable {
    var text: String
    init(_ text: String) { self.text = text }
    var description: String { text }
}

/// Greenrobot's `IntTestEvent`.
struct IntTestEvent: Event, CustomStringConvertible, Equatable {
    var value: Int
    init(_ value: Int) { self.value = value }
    var description: String { "IntTestEvent(\(value))" }
}
