import Foundation
import Testing

@testable import EventBus
@testable import EventBusFoundation

/// Bugs found in review, each pinned by a test that failed before its fix.
@Suite("NotificationCenter bridge: regressions")
struct BridgeRegressionTests {
    private static let name = Notification.Name("BridgeRegressionTests.name")

    @Test("A subscription to a name and to that name from one sender gets each post once")
    func nameAndSenderFilterOnOneSubscription() {
        let center = NotificationCenter()
        let bus = EventBus(notificationCenter: center)
        let sender = Sentinel()
        let calls = Shared(0)
        let token = bus.on(notification: Self.name).ofType(Self.name, object: sender).next { _ in calls.increment() }

        center.post(name: Self.name, object: sender)
        center.post(name: Self.name, object: nil)

        #expect(calls.value == 2, "one call per post, not one per matching key")
        token.dispose()
    }

    @Test("Replacing the issue handler releases the old one outside the handler's lock")
    func replacingIssueHandlerReleasesOutsideLock() {
        let bus = EventBus(notificationCenter: NotificationCenter())
        let readInDeinit = Shared(false)
        final class ReadsHandlerOnDeinit: @unchecked Sendable {
            // @unchecked Sendable: immutable.
            let bus: EventBus
            let done: Shared<Bool>
            init(bus: EventBus, done: Shared<Bool>) { (self.bus, self.done) = (bus, done) }
            deinit {
                _ = bus.notificationBridgeIssueHandler  // re-enters the handler's lock if held
                done.withLock { $0 = true }
            }
        }
        do {
            let captured = ReadsHandlerOnDeinit(bus: bus, done: readInDeinit)
            bus.notificationBridgeIssueHandler = { _ in withExtendedLifetime(captured) {} }
        }
        bus.notificationBridgeIssueHandler = nil
        #expect(readInDeinit.value)
    }

    @Test("An outbound bridge posts every event of its type once, whatever its key (even one starting with U+0000)")
    func everyKeyIsPostedOnce() {
        let center = NotificationCenter()
        let bus = EventBus(notificationCenter: center)
        let posts = Shared(0)
        let observer = center.addObserver(forName: Self.name, object: nil, queue: nil) { _ in posts.increment() }
        let bridge = bus.bridge(JSONEvent.self) { _ in Notification(name: Self.name) }

        bus.dispatch(JSONEvent(id: "\u{0}EventBus.outboundNotificationBridge"))
        bus.dispatch(JSONEvent(id: "ordinary"))

        #expect(posts.value == 2)
        bridge.dispose()
        center.removeObserver(observer)
    }
}
