import EventBusJSON
import Foundation
import Testing

@testable import EventBus
@testable import EventBusFoundation

/// Bugs found in review, each pinned by a test that failed before its fix.
@Suite("NotificationCenter bridge: regressions", .offThePool)
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

    @Test(
        "A subscription whose first key is a sender filter, dropped for the plain name chained after it, gets each post once and ends with its token"
    )
    func senderFilterFirstThenName() {
        let center = NotificationCenter()
        let bus = EventBus(notificationCenter: center)
        let sender = Sentinel()
        let calls = Shared(0)
        // The sender key is the subscription's first node: the hooks drop it, and the plain name's
        // node becomes the primary the token names.
        let token = bus.on(notification: Self.name, object: sender).ofType(Self.name).next { _ in calls.increment() }

        center.post(name: Self.name, object: sender)
        center.post(name: Self.name, object: nil)
        #expect(calls.value == 2, "one call per post, not one per matching key")
        #expect(!token.isDisposed)
        #expect(token.info?.keys == [Self.name.rawValue], "only the admitted key is registered")
        #expect(bus.subscriptionCount(of: NotificationEvent.self) == 1)

        token.dispose()
        center.post(name: Self.name, object: nil)
        #expect(calls.value == 2, "nothing after dispose")
        #expect(token.isDisposed)
        #expect(bus.subscriptionCount(of: NotificationEvent.self) == 0)
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

    @Test(
        "An outbound bridge is a plain subscription: it posts every event of its type once, whatever its key (even one starting with U+0000, formerly the reserved outbound key)"
    )
    func everyKeyIsPostedOnce() {
        let center = NotificationCenter()
        let bus = EventBus(notificationCenter: center)
        let posted = Shared<[String]>([])
        let observer = center.addObserver(forName: Self.name, object: nil, queue: nil) { notification in
            posted.append(notification.userInfo?["id"] as? String ?? "?")
        }
        defer { center.removeObserver(observer) }
        let bridge = bus.bridge(JSONEvent.self) { event in
            Notification(name: Self.name, object: nil, userInfo: ["id": event.id])
        }
        #expect(bus.subscriptionCount(of: JSONEvent.self) == 1, "the bridge is the app's subscription: counted")
        #expect(bus.subscriptions(of: JSONEvent.self).count == 1, "listed once, no hidden key")
        let reservedLooking = "\u{0}EventBus.outboundNotificationBridge"
        let keyed = Shared(0)
        let keyedToken = bus.on(JSONEvent.self).ofType(reservedLooking).next { _ in keyed.increment() }

        bus.dispatch(JSONEvent(id: reservedLooking))
        bus.dispatch(JSONEvent(id: "\u{0}"))
        bus.dispatch(JSONEvent(id: "ordinary"))

        #expect(posted.value == [reservedLooking, "\u{0}", "ordinary"])
        #expect(keyed.value == 1, "a typed subscriber of that key gets it too")
        bridge.dispose()
        keyedToken.dispose()
        #expect(bus.subscriptionCount(of: JSONEvent.self) == 0)
        bus.dispatch(JSONEvent(id: "after"))
        #expect(posted.value.count == 3)
    }
}
