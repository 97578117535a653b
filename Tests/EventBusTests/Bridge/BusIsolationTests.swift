import Foundation
import Testing

@testable import EventBus
@testable import EventBusFoundation

extension Notification.Name {
    fileprivate static let isolation = Notification.Name("EventBusTests.isolation")
}

/// Two buses made with `init()` are independent through the NotificationCenter bridge (each has a
/// private center: a dispatch on one reaches none of the other's subscribers), and the bridge adds
/// nothing to the notifications it posts.
@Suite("Bus isolation through the NotificationCenter bridge", .offThePool)
struct BusIsolationTests {
    struct Ping: Event { let id: String }

    /// Bridges `Ping` both ways on `bus` through `.isolation`, and records what its subscribers get.
    private static func bridged(_ bus: EventBus, log: Shared<[String]>, name: String) -> [EventToken] {
        [
            bus.bridge(Ping.self) { Notification(name: .isolation, object: nil, userInfo: ["id": $0.id]) },
            bus.bridge(notification: .isolation, to: Ping.self) { notification in
                (notification.userInfo?["id"] as? String).map(Ping.init)
            },
            bus.on(Ping.self).next { log.append("\(name) typed \($0.id)") },
            bus.on(notification: .isolation).next { _ in log.append("\(name) notification") },
        ]
    }

    @Test("a typed dispatch on bus A reaches none of bus B's subscribers, typed or notification")
    func typedDispatchStaysOnItsBus() {
        let a = EventBus()
        let b = EventBus()
        let log = Shared<[String]>([])
        let tokens = Self.bridged(a, log: log, name: "A") + Self.bridged(b, log: log, name: "B")
        defer { for token in tokens { token.dispose() } }

        a.dispatch(Ping(id: "1"))
        #expect(log.value.sorted() == ["A notification", "A typed 1"])

        log.withLock { $0.removeAll() }
        b.post(Notification(name: .isolation, object: nil, userInfo: ["id": "2"]))
        #expect(log.value.sorted() == ["B notification", "B typed 2"])
    }

    @Test("each bus made with init() has a private center; a given center is used as is")
    func privateCenters() {
        let a = EventBus()
        let b = EventBus()
        let center = NotificationCenter()
        #expect(a.notificationCenter !== b.notificationCenter)
        #expect(a.notificationCenter !== NotificationCenter.default)
        #expect(a.notificationCenter === a.notificationCenter)  // the same one for the bus's life
        #expect(EventBus(notificationCenter: center).notificationCenter === center)
        #expect(EventBus(notificationCenter: .default).notificationCenter === NotificationCenter.default)
    }

    @Test("a post on NotificationCenter.default does not reach a bus made with init()")
    func defaultCenterDoesNotReachPrivateBuses() {
        let bus = EventBus()
        let calls = Shared(0)
        let token = bus.on(notification: .isolation).next { _ in calls.increment() }
        defer { token.dispose() }
        NotificationCenter.default.post(name: .isolation, object: nil)
        #expect(calls.value == 0)
        bus.notificationCenter.post(name: .isolation, object: nil)
        #expect(calls.value == 1)
    }

    @Test("a legacy observer of a typed bridge's post sees exactly the converter's userInfo keys")
    func userInfoHasOnlyTheUsersKeys() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let tokens = Self.bridged(bus, log: log, name: "bus")
        defer { for token in tokens { token.dispose() } }
        let keys = Shared<[[String]]>([])
        let observer = bus.notificationCenter.addObserver(forName: .isolation, object: nil, queue: nil) { note in
            let names = (note.userInfo ?? [:]).keys.map { "\($0)" }.sorted()
            keys.withLock { $0.append(names) }
        }
        defer { bus.notificationCenter.removeObserver(observer) }

        bus.dispatch(Ping(id: "42"))

        #expect(keys.value == [["id"]])
        // And no echo without the marker: the typed subscriber got the event once, not back again.
        #expect(log.value.sorted() == ["bus notification", "bus typed 42"])
    }

    @Test("the converter's notification is posted unchanged, even when it has no userInfo")
    func nilUserInfoStaysNil() {
        let bus = EventBus()
        let token = bus.bridge(Ping.self) { _ in Notification(name: .isolation) }
        defer { token.dispose() }
        let userInfos = Shared<[Bool]>([])
        let observer = bus.notificationCenter.addObserver(forName: .isolation, object: nil, queue: nil) { note in
            let isNil = note.userInfo == nil
            userInfos.withLock { $0.append(isNil) }
        }
        defer { bus.notificationCenter.removeObserver(observer) }

        bus.dispatch(Ping(id: "1"))
        #expect(userInfos.value == [true])
    }

    @Test("a legacy observer that re-posts the bridge's name later feeds the typed subscribers")
    func laterRepostIsConverted() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let tokens = Self.bridged(bus, log: log, name: "bus")
        defer { for token in tokens { token.dispose() } }

        bus.dispatch(Ping(id: "typed"))
        // The same name, posted afterwards by legacy code: a new post, converted once.
        bus.notificationCenter.post(name: .isolation, object: nil, userInfo: ["id": "legacy"])

        #expect(log.value.filter { $0.contains("typed") } == ["bus typed typed", "bus typed legacy"])
    }
}
