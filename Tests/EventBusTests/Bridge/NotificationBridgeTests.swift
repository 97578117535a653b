import Dispatch
import Foundation
import Testing

@testable import EventBus
@testable import EventBusFoundation

extension Notification.Name {
    static let bridgeA = Notification.Name("EventBusTests.bridge.A")
    static let bridgeB = Notification.Name("EventBusTests.bridge.B")
}

/// A bus on a private center (never `.default`), with the number of observers the bridge has on it
/// and a recorder for its issues.
private struct BridgeFixture {
    let center = NotificationCenter()
    let bus: EventBus
    let issues = Shared<[String]>([])

    init() {
        bus = EventBus(notificationCenter: center)
        let issues = issues
        bus.notificationBridgeIssueHandler = { issues.append("\($0)") }
    }

    /// The observers this bus has installed on its center now (one per subscribed name).
    var installedObservers: Int { bus.notificationHooks.installedObservers.withLock { $0 } }

    /// Adds a legacy observer that counts the notifications named `name`.
    func legacyObserver(_ name: Notification.Name, count: Shared<Int>) -> any NSObjectProtocol {
        center.addObserver(forName: name, object: nil, queue: nil) { _ in count.increment() }
    }
}

@Suite("NotificationCenter → bus", .tags(.stress), .offThePool)
struct NotificationToBusTests {
    @Test("a posted notification reaches every subscriber to its name once, through one observer")
    func oneObserverPerName() {
        let fixture = BridgeFixture()
        let legacy = Shared(0)
        let observer = fixture.legacyObserver(.bridgeA, count: legacy)
        defer { fixture.center.removeObserver(observer) }
        let received = Shared<[String]>([])
        let t1 = fixture.bus.on(notification: .bridgeA).next { received.append("1:\($0.name.rawValue)") }
        let t2 = fixture.bus.on(NotificationEvent.self).ofType(Notification.Name.bridgeA.rawValue).next { _ in
            received.append("2")
        }
        #expect(fixture.installedObservers == 1)  // one observer for .bridgeA, whatever the subscriptions
        let t3 = fixture.bus.on(notification: .bridgeB).ofType(.bridgeA).next { _ in received.append("3") }
        #expect(fixture.installedObservers == 2)  // and one for .bridgeB

        fixture.center.post(name: .bridgeA, object: nil)

        #expect(received.value.sorted() == ["1:EventBusTests.bridge.A", "2", "3"])
        #expect(legacy.value == 1)
        // The observers stay while any subscription names them: t3 still names both.
        t1.dispose()
        t2.dispose()
        #expect(fixture.installedObservers == 2)
        t3.dispose()
        #expect(fixture.installedObservers == 0)
    }

    @Test("dispose stops delivery, and the observer leaves the center with the last subscription")
    func disposeAndObserverRemoval() {
        let fixture = BridgeFixture()
        let legacy = Shared(0)  // counts the posts: each one below does reach the center
        let observer = fixture.legacyObserver(.bridgeA, count: legacy)
        defer { fixture.center.removeObserver(observer) }
        let first = Shared(0)
        let second = Shared(0)
        let t1 = fixture.bus.on(notification: .bridgeA).next { _ in first.increment() }
        let t2 = fixture.bus.on(notification: .bridgeA).next { _ in second.increment() }
        #expect(fixture.installedObservers == 1)

        fixture.center.post(name: .bridgeA, object: nil)
        #expect(first.value == 1 && second.value == 1)

        t1.dispose()
        #expect(fixture.installedObservers == 1)
        fixture.center.post(name: .bridgeA, object: nil)
        #expect(first.value == 1 && second.value == 2)

        t2.dispose()
        #expect(fixture.installedObservers == 0)  // the last subscription took the observer with it
        fixture.center.post(name: .bridgeA, object: nil)
        #expect(first.value == 1 && second.value == 2)
        #expect(legacy.value == 3)

        // A new subscription installs a new observer, and takes it away when it ends.
        let t3 = fixture.bus.on(notification: .bridgeA).next { _ in first.increment() }
        #expect(fixture.installedObservers == 1)
        fixture.center.post(name: .bridgeA, object: nil)
        #expect(first.value == 2)
        t3.dispose()
        #expect(fixture.installedObservers == 0)
        fixture.center.post(name: .bridgeA, object: nil)
        #expect(first.value == 2 && second.value == 2)
        #expect(legacy.value == 5)
    }

    @Test("the observer is removed when the last subscription ends by owner death, bag or bus deinit")
    func observerRemovalOtherEnds() {
        let fixture = BridgeFixture()
        let delivered = Shared(0)
        var owner: Sentinel? = Sentinel()
        fixture.bus.on(notification: .bridgeA).freeWith(owner).next { _, _ in delivered.increment() }
        fixture.center.post(name: .bridgeA, object: nil)
        #expect(delivered.value == 1 && fixture.installedObservers == 1)
        owner = nil
        fixture.bus.purge()  // a synchronous subscription: its owner is reclaimed on this thread
        #expect(fixture.installedObservers == 0)
        fixture.center.post(name: .bridgeA, object: nil)
        #expect(delivered.value == 1)

        var bag: DisposeBag? = DisposeBag()
        fixture.bus.on(notification: .bridgeB).next { _ in delivered.increment() }.disposed(by: bag!)
        fixture.center.post(name: .bridgeB, object: nil)
        #expect(delivered.value == 2 && fixture.installedObservers == 1)
        bag = nil
        #expect(fixture.installedObservers == 0)
        fixture.center.post(name: .bridgeB, object: nil)
        #expect(delivered.value == 2)

        let center = NotificationCenter()
        let legacy = Shared(0)
        let observer = center.addObserver(forName: .bridgeA, object: nil, queue: nil) { _ in legacy.increment() }
        defer { center.removeObserver(observer) }
        var bus: EventBus? = EventBus(notificationCenter: center)
        let installed = bus!.notificationHooks.installedObservers  // shares the bus's counter
        weak let weakBus = bus
        _ = bus!.on(notification: .bridgeA).next { _ in delivered.increment() }
        center.post(name: .bridgeA, object: nil)
        #expect(delivered.value == 3 && installed.withLock { $0 } == 1)
        bus = nil
        #expect(weakBus == nil)  // the center's observer does not keep the bus alive
        #expect(installed.withLock { $0 } == 0)  // and it left the center with the bus
        center.post(name: .bridgeA, object: nil)
        #expect(delivered.value == 3)
        #expect(legacy.value == 2)
    }

    @Test("a main-actor subscription to several names: on(notification:).onMainActor().ofType(name)")
    func mainActorSeveralNames() {
        let fixture = BridgeFixture()
        let received = Shared<[String]>([])
        let offMainQueue = Shared(0)
        let token = fixture.bus.on(notification: .bridgeA).onMainActor().ofType(.bridgeB).next { event in
            if !isOnMainQueue { offMainQueue.increment() }
            received.append(event.name.rawValue)
        }
        #expect(fixture.installedObservers == 2)

        fixture.center.post(name: .bridgeA, object: nil)  // posted off the main queue: enqueued there
        fixture.center.post(name: .bridgeB, object: nil)
        #expect(MainQueue.drain())
        #expect(received.value == [Notification.Name.bridgeA.rawValue, Notification.Name.bridgeB.rawValue])
        #expect(offMainQueue.value == 0)

        token.dispose()
        #expect(fixture.installedObservers == 0)
        fixture.center.post(name: .bridgeA, object: nil)
        #expect(MainQueue.drain())
        #expect(received.value.count == 2)
    }

    @Test("a subscription filtered by sender gets only that sender's notifications")
    func senderFilter() {
        let fixture = BridgeFixture()
        let alice = Sentinel()
        let bob = Sentinel()
        let fromAlice = Shared(0)
        let fromAnyone = Shared(0)
        let wrongSender = Shared(0)
        let aliceID = ObjectIdentifier(alice)
        _ = fixture.bus.on(notification: .bridgeA, object: alice).next { event in
            let sender = event.object.map { ObjectIdentifier($0 as AnyObject) }
            if sender != aliceID { wrongSender.increment() }
            fromAlice.increment()
        }
        _ = fixture.bus.on(notification: .bridgeA).next { _ in fromAnyone.increment() }
        let fromBob = Shared(0)
        let bobToken = fixture.bus.on(notification: .bridgeA, object: bob).next { _ in fromBob.increment() }
        #expect(fixture.installedObservers == 1)  // one observer for the name, whatever the senders

        fixture.center.post(name: .bridgeA, object: alice)
        fixture.center.post(name: .bridgeA, object: bob)
        fixture.center.post(name: .bridgeA, object: nil)
        fixture.center.post(name: .bridgeA, object: "a value, not an object")

        #expect(fromAlice.value == 1)
        #expect(fromBob.value == 1)
        #expect(wrongSender.value == 0)
        #expect(fromAnyone.value == 4)  // each post once: a single observer for the name
        bobToken.dispose()
        #expect(fixture.installedObservers == 1)  // the other subscriptions still name it
        withExtendedLifetime((alice, bob)) {}
    }

    @Test("a subscription to NotificationEvent without a name is refused and reported")
    func unnamedSubscriptionRefused() {
        let fixture = BridgeFixture()
        let calls = Shared(0)
        let owner = Sentinel()
        let token = fixture.bus.on(NotificationEvent.self).next { _ in calls.increment() }
        let owned = fixture.bus.on(NotificationEvent.self).freeWith(owner).next { _, _ in calls.increment() }

        #expect(token.isDisposed && owned.isDisposed)
        #expect(fixture.bus.subscriptionCount(of: NotificationEvent.self) == 0)
        #expect(fixture.issues.value.count == 2)
        #expect(fixture.issues.value.allSatisfy { $0.contains("without a name was refused") })
        fixture.bus.post(Notification(name: .bridgeA))
        fixture.center.post(name: .bridgeA, object: nil)
        #expect(calls.value == 0)
        #expect(fixture.installedObservers == 0)
    }

    @Test("exactly once: 2 threads post 10,000 notifications each while a third subscribes and disposes")
    func exactlyOnceUnderChurn() {
        let fixture = BridgeFixture()
        let perThread = 10_000
        let stableSeen = Shared<Set<Int>>([])
        let stableDuplicates = Shared(0)
        let stable = fixture.bus.on(notification: .bridgeA).next { event in
            let seq = event.userInfo?["seq"] as? Int ?? -1
            stableSeen.withLock { if !$0.insert(seq).inserted { stableDuplicates.increment() } }
        }
        let churnDuplicates = Shared(0)
        let churnDeliveries = Shared(0)
        let churnSubscriptions = Shared(0)
        let postersDone = Shared(0)
        let legacyB = Shared(0)
        let observerB = fixture.legacyObserver(.bridgeB, count: legacyB)
        defer { fixture.center.removeObserver(observerB) }

        let finished = concurrently(3, timeout: .seconds(120)) { index in
            if index < 2 {
                for i in 0..<perThread {
                    // Even sequence numbers: .bridgeA (stable subscriber); odd: .bridgeB (only the
                    // churning subscriptions, so its observer comes and goes). One thread posts
                    // with center.post, the other with bus.dispatch.
                    let seq = index * perThread + i
                    let notification = Notification(
                        name: seq % 2 == 0 ? .bridgeA : .bridgeB, object: nil, userInfo: ["seq": seq])
                    if index == 0 { fixture.center.post(notification) } else { fixture.bus.post(notification) }
                }
                postersDone.increment()
            } else {
                while postersDone.value < 2 {
                    let seen = Shared<Set<Int>>([])
                    let record: @Sendable (NotificationEvent) -> Void = { event in
                        let seq = event.userInfo?["seq"] as? Int ?? -1
                        seen.withLock { if !$0.insert(seq).inserted { churnDuplicates.increment() } }
                        churnDeliveries.increment()
                    }
                    let onA = fixture.bus.on(notification: .bridgeA).next(record)
                    let onB = fixture.bus.on(notification: .bridgeB).next(record)
                    onB.dispose()
                    let onBAgain = fixture.bus.on(notification: .bridgeB).next(record)
                    onA.dispose()
                    onBAgain.dispose()
                    churnSubscriptions.increment(by: 3)
                }
            }
        }
        #expect(finished)
        print(
            "bridge churn: 2 posting threads × \(perThread) notifications, 1 thread made \(churnSubscriptions.value) subscriptions (\(churnDeliveries.value) deliveries to them), \(legacyB.value) .bridgeB posts seen by a legacy observer, \(fixture.installedObservers) observer left installed"
        )

        #expect(stableSeen.value.count == perThread)  // every .bridgeA post (10,000 of 20,000)
        #expect(stableSeen.value.allSatisfy { $0 % 2 == 0 })
        #expect(stableDuplicates.value == 0)
        #expect(churnDuplicates.value == 0)
        #expect(churnSubscriptions.value > 0)
        #expect(legacyB.value == perThread)  // every .bridgeB post reached the center once

        // The churn ended with no subscription to .bridgeB: its observer is gone, only the stable
        // subscriber's .bridgeA observer is left, and it goes with that subscriber.
        #expect(fixture.installedObservers == 1)
        #expect(fixture.bus.subscriptionCount(of: NotificationEvent.self) == 1)
        let deliveries = churnDeliveries.value
        fixture.center.post(name: .bridgeB, object: nil)
        #expect(churnDeliveries.value == deliveries && legacyB.value == perThread + 1)
        stable.dispose()
        #expect(fixture.installedObservers == 0)
    }
}

@Suite("bus → NotificationCenter", .tags(.stress), .offThePool)
struct BusToNotificationTests {
    @Test("dispatching a notification posts it: legacy observers and bus subscribers get it once")
    func dispatchPostsOnce() {
        let fixture = BridgeFixture()
        let legacy = Shared(0)
        let observer = fixture.legacyObserver(.bridgeA, count: legacy)
        defer { fixture.center.removeObserver(observer) }

        // No bus subscriber: legacy observers still see it.
        fixture.bus.post(Notification(name: .bridgeA))
        #expect(legacy.value == 1)
        #expect(fixture.installedObservers == 0)  // nothing subscribed: the bus does not observe

        let busCount = Shared(0)
        let token = fixture.bus.on(notification: .bridgeA).next { _ in busCount.increment() }
        fixture.bus.post(Notification(name: .bridgeA, object: nil, userInfo: ["k": 1]))
        fixture.bus.dispatch(NotificationEvent(name: .bridgeA))
        #expect(fixture.installedObservers == 1)
        // Exactly once each, through the bridge's observer; and one post per dispatch: no echo of
        // the bridged delivery back into the center (the legacy observer would count it).
        #expect(busCount.value == 2)
        #expect(legacy.value == 3)

        fixture.bus.dispatchOnBusQueue(NotificationEvent(name: .bridgeA))
        #expect(waitUntil { busCount.value == 3 && legacy.value == 4 })
        // Once a later dispatch on the bus queue ran, the counts are final: still one each.
        let marker = Shared(0)
        let markerToken = fixture.bus.on(UserLoggedIn.self).next { _ in marker.increment() }
        fixture.bus.dispatchOnBusQueue(UserLoggedIn(userID: "marker"))
        #expect(waitUntil { marker.value == 1 })
        #expect(busCount.value == 3 && legacy.value == 4)
        markerToken.dispose()
        token.dispose()
        #expect(fixture.installedObservers == 0)
    }

    @Test("a handler may dispatch a notification from inside a bridged delivery without looping")
    func reentrantDispatch() {
        let fixture = BridgeFixture()
        let aCount = Shared(0)
        let bCount = Shared(0)
        let bus = fixture.bus
        _ = bus.on(notification: .bridgeA).next { [unowned bus] _ in  // unowned: a handler holding its bus is a cycle
            aCount.increment()
            bus.post(Notification(name: .bridgeB))
        }
        _ = bus.on(notification: .bridgeB).next { _ in bCount.increment() }
        bus.post(Notification(name: .bridgeA))
        #expect(aCount.value == 1 && bCount.value == 1)
    }
}

private struct UserLoggedIn: Event, Equatable {
    let userID: String
}

private struct CartChanged: Event, Equatable {
    let count: Int
}

private enum Connectivity: Event, Equatable {
    case online, offline
}

@Suite("Typed notification bridging", .tags(.stress), .offThePool)
struct TypedBridgeTests {
    @Test("a converter feeds typed subscribers from legacy posts; nil is skipped and reported")
    func inbound() {
        let fixture = BridgeFixture()
        let received = Shared<[String]>([])
        fixture.bus.bridge(notification: .bridgeA, to: UserLoggedIn.self) { notification in
            (notification.userInfo?["id"] as? String).map(UserLoggedIn.init)
        }
        _ = fixture.bus.on(UserLoggedIn.self).next { received.append($0.userID) }

        fixture.center.post(name: .bridgeA, object: nil, userInfo: ["id": "42"])
        fixture.center.post(name: .bridgeA, object: nil, userInfo: ["id": 7])  // does not convert
        fixture.bus.post(Notification(name: .bridgeA, object: nil, userInfo: ["id": "43"]))

        #expect(received.value == ["42", "43"])
        #expect(fixture.issues.value.count == 1)
        #expect(fixture.issues.value.first?.contains("did not convert to UserLoggedIn") == true)
    }

    @Test("typed dispatches reach legacy observers and bus notification subscribers once")
    func outbound() {
        let fixture = BridgeFixture()
        let legacyCounts = Shared<[Int]>([])
        let observer = fixture.center.addObserver(forName: .bridgeB, object: nil, queue: nil) { notification in
            legacyCounts.withLock { $0.append(notification.userInfo?["count"] as? Int ?? -1) }
        }
        defer { fixture.center.removeObserver(observer) }
        let typed = Shared(0)
        let asNotification = Shared(0)
        let token = fixture.bus.bridge(CartChanged.self) { event in
            Notification(name: .bridgeB, object: nil, userInfo: ["count": event.count])
        }
        _ = fixture.bus.on(CartChanged.self).next { _ in typed.increment() }
        _ = fixture.bus.on(notification: .bridgeB).next { _ in asNotification.increment() }

        fixture.bus.dispatch(CartChanged(count: 3))
        #expect(typed.value == 1)
        #expect(legacyCounts.value == [3])
        #expect(asNotification.value == 1)
        // The bridge is a subscription the app made: listed and counted, at the line that made it.
        #expect(fixture.bus.subscriptionCount(of: CartChanged.self) == 2)
        #expect(fixture.bus.subscriptions(of: CartChanged.self).map(\.isInternal) == [false, false])
        #expect(token.info?.callSite.hasPrefix("EventBusTests/NotificationBridgeTests.swift:") == true)

        token.dispose()
        fixture.bus.dispatch(CartChanged(count: 4))
        #expect(typed.value == 2)
        #expect(legacyCounts.value == [3])  // the bridge ended
    }

    @Test("both directions at once: every party gets each event once, and nothing loops")
    func bothWaysNoLoop() {
        let fixture = BridgeFixture()
        let legacy = Shared(0)
        let observer = fixture.legacyObserver(.bridgeA, count: legacy)
        defer { fixture.center.removeObserver(observer) }
        let typed = Shared<[String]>([])
        let raw = Shared(0)
        fixture.bus.bridge(notification: .bridgeA, to: UserLoggedIn.self) { notification in
            (notification.userInfo?["id"] as? String).map(UserLoggedIn.init)
        }
        fixture.bus.bridge(UserLoggedIn.self) { event in
            Notification(name: .bridgeA, object: nil, userInfo: ["id": event.userID])
        }
        _ = fixture.bus.on(UserLoggedIn.self).next { typed.append($0.userID) }
        _ = fixture.bus.on(notification: .bridgeA).next { _ in raw.increment() }

        // Legacy post: typed subscribers once, legacy observers once (it is not posted back).
        fixture.center.post(name: .bridgeA, object: nil, userInfo: ["id": "legacy"])
        #expect(typed.value == ["legacy"])
        #expect(legacy.value == 1)
        #expect(raw.value == 1)

        // Typed dispatch: typed subscribers once, legacy observers once (it is not converted back).
        fixture.bus.dispatch(UserLoggedIn(userID: "typed"))
        #expect(typed.value == ["legacy", "typed"])
        #expect(legacy.value == 2)
        #expect(raw.value == 2)

        // Bus notification dispatch: the same as a legacy post.
        fixture.bus.post(Notification(name: .bridgeA, object: nil, userInfo: ["id": "bus"]))
        #expect(typed.value == ["legacy", "typed", "bus"])
        #expect(legacy.value == 3)
        #expect(raw.value == 3)
        #expect(fixture.issues.value.isEmpty)
    }

    @Test("several names map to values of one typed event, with one token")
    func nameTable() {
        let fixture = BridgeFixture()
        let states = Shared<[String]>([])
        let token = fixture.bus.bridge(notifications: [
            Notification.Name.bridgeA: Connectivity.online, .bridgeB: .offline,
        ])
        #expect(fixture.installedObservers == 2)  // one per name, for the one token
        _ = fixture.bus.on(Connectivity.self).next { states.append("\($0)") }
        fixture.center.post(name: .bridgeA, object: nil)
        fixture.center.post(name: .bridgeB, object: nil)
        token.dispose()
        #expect(fixture.installedObservers == 0)
        fixture.center.post(name: .bridgeA, object: nil)
        #expect(states.value == ["online", "offline"])
    }

    @Test("bridging NotificationEvent to a notification is refused and reported")
    func refusedOutbound() {
        let fixture = BridgeFixture()
        let token = fixture.bus.bridge(NotificationEvent.self) { $0.notification }
        #expect(token.isDisposed)
        #expect(fixture.issues.value.count == 1)
        let legacy = Shared(0)
        let observer = fixture.legacyObserver(.bridgeA, count: legacy)
        defer { fixture.center.removeObserver(observer) }
        fixture.bus.post(Notification(name: .bridgeA))
        #expect(legacy.value == 1)
    }
}

@Suite("NSObject subscribers", .offThePool)
struct NSObjectSubscribingTests {
    private final class Screen: NSObject, @unchecked Sendable {
        // @unchecked Sendable: `seen` is a Shared (locked).
        let seen = Shared(0)
    }

    @Test("an NSObject subclass subscribes to notifications bound to its lifetime")
    func nsObjectSubscribes() {
        let fixture = BridgeFixture()
        var screen: Screen? = Screen()
        let seen = screen!.seen
        screen!.subscribeNotification(.bridgeA, on: fixture.bus).next { owner, _ in owner.seen.increment() }
        screen!.subscribe(UserLoggedIn.self, on: fixture.bus).next { owner, _ in owner.seen.increment() }
        fixture.center.post(name: .bridgeA, object: nil)
        fixture.bus.dispatch(UserLoggedIn(userID: "1"))
        #expect(seen.value == 2)
        #expect(fixture.installedObservers == 1)

        screen = nil
        fixture.bus.purge()
        #expect(fixture.installedObservers == 0)  // the owner's death removed the observer
        fixture.center.post(name: .bridgeA, object: nil)
        fixture.bus.dispatch(UserLoggedIn(userID: "2"))
        #expect(seen.value == 2)
    }
}
