import Dispatch
import Foundation
import Testing

@testable import EventBus
@testable import EventBusFoundation

extension Notification.Name {
    static let reliabilityBadInput = Notification.Name("EventBusTests.reliability.badInput")
}

/// Battery item 7 (DESIGN.md §8) for the NotificationCenter bridge, main-actor subscribers and
/// event streams: no input crashes the library; each misuse has the documented outcome.
@Suite("Reliability: bad input (isolation and bridge paths)", .tags(.stress), .offThePool)
struct IsolationAndBridgeBadInputTests {
    struct Note: Event {
        let thread: Int
        let seq: Int
    }

    struct Typed: Event {
        let thread: Int
        let seq: Int
    }

    @Test(
        "A converter returning nil skips that notification (reported once), from 4 posting threads; everyone else still gets it"
    )
    func converterReturningNil() async {
        let center = NotificationCenter()
        let bus = EventBus(notificationCenter: center)
        let reports = Shared<[Int]>([])
        let otherIssues = Shared<[String]>([])
        bus.notificationBridgeIssueHandler = { issue in
            if case .conversionFailed(let event, let type) = issue, type == Typed.self {
                reports.withLock { $0.append(event.userInfo?["seq"] as? Int ?? -1) }
            } else {
                otherIssues.append("\(issue)")
            }
        }
        bus.bridge(notification: .reliabilityBadInput, to: Typed.self) { notification in
            // Refuses every third notification, and any without the expected payload.
            guard let thread = notification.userInfo?["thread"] as? Int,
                let seq = notification.userInfo?["seq"] as? Int,
                seq % 3 != 0
            else { return nil }
            return Typed(thread: thread, seq: seq)
        }
        let threads = 4
        let perThread = 500
        let typed = Shared([[Int]](repeating: [], count: threads))
        let raw = Shared(0)
        let legacy = Shared(0)
        _ = bus.on(Typed.self).next { event in typed.withLock { $0[event.thread].append(event.seq) } }
        _ = bus.on(notification: .reliabilityBadInput).next { _ in raw.increment() }
        let observer = center.addObserver(forName: .reliabilityBadInput, object: nil, queue: nil) { _ in
            legacy.increment()
        }
        defer { center.removeObserver(observer) }

        let finished = await concurrentlyAwaiting(threads, within: 60) { thread in
            for seq in 0..<perThread {
                let notification = Notification(
                    name: .reliabilityBadInput, object: nil, userInfo: ["thread": thread, "seq": seq])
                // Half through the center, half through the bus: the same path into the bridge.
                if seq % 2 == 0 { center.post(notification) } else { bus.post(notification) }
            }
        }
        #expect(finished)
        // One notification with no payload at all: skipped and reported, not a crash.
        center.post(name: .reliabilityBadInput, object: nil)

        let converted = (0..<perThread).filter { $0 % 3 != 0 }
        #expect(typed.value == Array(repeating: converted, count: threads))
        let refusedPerThread = perThread - converted.count
        #expect(reports.value.count == threads * refusedPerThread + 1, "each skipped notification is reported once")
        #expect(reports.value.allSatisfy { $0 == -1 || $0 % 3 == 0 })
        #expect(otherIssues.value.isEmpty)
        #expect(
            raw.value == threads * perThread + 1,
            "a skipped conversion does not hide the notification from other subscribers")
        #expect(legacy.value == threads * perThread + 1)
        print(
            "bad input: \(threads) threads posted \(threads * perThread + 1) notifications; \(reports.value.count) did not "
                + "convert (skipped and reported), \(typed.value.map(\.count).reduce(0, +)) converted, each exactly once"
        )
    }

    @Test(
        "A NotificationEvent subscription without a name is refused in every form: plain, owned, main-actor, stream, empty name table"
    )
    func unnamedNotificationSubscriptionRefused() async {
        let center = NotificationCenter()
        let bus = EventBus(notificationCenter: center)
        let issues = Shared<[String]>([])
        bus.notificationBridgeIssueHandler = { issues.append("\($0)") }
        let calls = Shared(0)
        let owner = Sentinel()
        let tokens = [
            bus.on(NotificationEvent.self).next { _ in calls.increment() },
            bus.on(NotificationEvent.self).freeWith(owner).next { _, _ in calls.increment() },
            bus.on(NotificationEvent.self).onMainActor().next { _ in calls.increment() },
            bus.bridge(notifications: [Notification.Name: Typed]()),
        ]
        #expect(tokens.allSatisfy { $0.isDisposed })
        // A stream on a refused subscription finishes at once.
        let stream = bus.on(NotificationEvent.self).events()
        let streamEnded = await AsyncWait.value { await stream.reduce(0) { count, _ in count + 1 } }
        #expect(streamEnded == 0, "the stream of a refused subscription finishes with nothing")

        #expect(issues.value.count == 5)
        #expect(issues.value.allSatisfy { $0.contains("without a name was refused") })
        #expect(bus.subscriptionCount(of: NotificationEvent.self) == 0)
        center.post(name: .reliabilityBadInput, object: nil)
        bus.post(Notification(name: .reliabilityBadInput))
        #expect(MainQueue.drain())
        #expect(calls.value == 0)
        #expect(
            bus.notificationHooks.installedObservers.withLock { $0 } == 0,
            "no observer was installed for a refused subscription")
        for token in tokens { token.dispose() }
        withExtendedLifetime(owner) {}
    }

    @Test(
        "A subscription to a notification name starting with U+0000 is refused and reported in every form (defect 10: it silently received nothing)"
    )
    func nameStartingWithNULRefused() async {
        let center = NotificationCenter()
        let bus = EventBus(notificationCenter: center)
        let refused = Shared<[String]>([])
        let otherIssues = Shared<[String]>([])
        bus.notificationBridgeIssueHandler = { issue in
            if case .unsupportedName(let name) = issue {
                refused.append(name.rawValue)
            } else {
                otherIssues.append("\(issue)")
            }
        }
        let nul = Notification.Name("\u{0}EventBusTests.reliability.nul")
        let bare = Notification.Name("\u{0}")
        let calls = Shared(0)
        let owner = Sentinel()
        let sender = Sentinel()
        let tokens = [
            bus.on(notification: nul).next { _ in calls.increment() },
            bus.on(notification: bare).next { _ in calls.increment() },
            bus.on(NotificationEvent.self).ofType(nul.rawValue).next { _ in calls.increment() },
            bus.on(notification: nul).freeWith(owner).next { _, _ in calls.increment() },
            bus.on(notification: nul).atQueue(DispatchQueue(label: "nul")).next { _ in calls.increment() },
            bus.on(notification: nul).onMainActor().next { _ in calls.increment() },
            // One bad name refuses the whole subscription, good names with it included.
            bus.on(notification: .reliabilityBadInput).ofType(nul).next { _ in calls.increment() },
            bus.on(notification: nul).ofType(.reliabilityBadInput, object: sender).next { _ in calls.increment() },
            bus.bridge(notification: nul, to: Typed.self) { _ in
                calls.increment()
                return Typed(thread: 0, seq: 0)
            },
            bus.bridge(notifications: [nul: Typed(thread: 0, seq: 0), .reliabilityBadInput: Typed(thread: 0, seq: 1)]),
        ]
        #expect(tokens.allSatisfy { $0.isDisposed }, "a refused subscription returns a disposed token")
        let stream = bus.on(notification: nul).events()
        let streamed = await AsyncWait.value { await stream.reduce(0) { count, _ in count + 1 } }
        #expect(streamed == 0, "the stream of a refused subscription finishes with nothing")

        #expect(refused.value.count == tokens.count + 1, "each refused subscription is reported once")
        #expect(Set(refused.value) == [nul.rawValue, bare.rawValue], "the report names the refused name")
        #expect(otherIssues.value.isEmpty)
        #expect(bus.subscriptionCount(of: NotificationEvent.self) == 0)
        #expect(bus.subscriptionCount == 0)
        #expect(bus.notificationHooks.installedObservers.withLock { $0 } == 0, "nothing is observed for them")
        let typed = Shared(0)
        let typedToken = bus.on(Typed.self).next { _ in typed.increment() }
        center.post(name: nul, object: nil)
        center.post(name: bare, object: nil)
        bus.post(Notification(name: nul))
        center.post(name: .reliabilityBadInput, object: sender)
        #expect(MainQueue.drain())
        #expect(calls.value == 0 && typed.value == 0)
        typedToken.dispose()
        for token in tokens { token.dispose() }  // disposing a refused token again is harmless
        withExtendedLifetime((owner, sender)) {}
        print(
            "bad input: \(tokens.count + 1) subscriptions naming U+0000-prefixed notification names (plain, keyed, "
                + "owned, queued, main-actor, mixed with good names, bridges, a stream): all refused and reported")
    }

    @Test(
        "A U+0000 name the bridge could take for one of its sender keys never silently receives nothing"
    )
    func nulNamesTheBridgeCouldMistake() {
        let center = NotificationCenter()
        let bus = EventBus(notificationCenter: center)
        let refused = Shared<[String]>([])
        bus.notificationBridgeIssueHandler = { issue in
            if case .unsupportedName(let name) = issue { refused.append(name.rawValue) }
        }
        let sender = Sentinel()

        // A U+0000 name filtered by sender: refused and reported like the plain form, or it gets the
        // sender's posts of that name.
        let nul = Notification.Name("\u{0}EventBusTests.reliability.nulFromSender")
        let fromSender = Shared(0)
        let filtered = bus.on(notification: nul, object: sender).next { _ in fromSender.increment() }
        center.post(name: nul, object: sender)
        #expect(
            (filtered.isDisposed && refused.value == [nul.rawValue]) || fromSender.value == 1,
            "sender-filtered: disposed \(filtered.isDisposed), \(refused.value.count) reports, \(fromSender.value) deliveries"
        )
        filtered.dispose()
        refused.withLock { $0 = [] }

        // A name spelled like a sender key ("\0<hex>\0<name>"): refused and reported, or it gets what
        // is posted under that name.
        let shaped = Notification.Name("\u{0}1f\u{0}EventBusTests.reliability.senderShaped")
        let calls = Shared(0)
        let token = bus.on(notification: shaped).next { _ in calls.increment() }
        center.post(name: shaped, object: nil)
        center.post(name: shaped, object: sender)
        let installed = bus.notificationHooks.installedObservers.withLock { $0 }
        #expect(
            (token.isDisposed && refused.value == [shaped.rawValue]) || calls.value == 2,
            "sender-key-shaped: disposed \(token.isDisposed), \(refused.value.count) reports, \(calls.value) deliveries, \(installed) observers installed"
        )
        token.dispose()
        #expect(bus.notificationHooks.installedObservers.withLock { $0 } == 0)
        withExtendedLifetime(sender) {}
    }

    @Test("Main-actor deliveries still enqueued when the bus is deallocated never start")
    func mainActorDeliveriesDieWithTheBus() {
        let calls = Shared(0)
        var bus: EventBus? = EventBus()
        _ = bus!.on(Note.self).onMainActor().next { _ in calls.increment() }
        weak let weakBus = bus
        let gate = MainQueue.block()
        let dispatched = onAnotherThread {
            for seq in 0..<10 { weakBus?.dispatch(Note(thread: 0, seq: seq)) }
        }
        #expect(dispatched)
        bus = nil
        #expect(weakBus == nil)
        #expect(gate.open())
        #expect(calls.value == 0)
    }

    @Test("Dispatching to main-actor subscribers and streams while the bus is torn down")
    func teardownWithMainActorAndStreams() async {
        let rounds = 100
        let mainActorCalls = Shared(0)
        let streamed = Shared(0)
        let outOfOrder = Shared(0)
        var consumers: [Task<Void, Never>] = []
        for round in 0..<rounds {
            var bus: EventBus? = EventBus()
            weak let weakBus = bus
            _ = bus!.on(Note.self).onMainActor().next { _ in mainActorCalls.increment() }
            // The owner is already gone:
            bus!.on(Note.self).onMainActor().freeWith(Sentinel()).next { _, _ in mainActorCalls.increment() }
            let stream =
                round % 2 == 0
                ? bus!.events(of: Note.self) : bus!.events(of: Note.self, buffering: .bufferingNewest(4))
            consumers.append(
                Task {
                    var last = [Int.min, Int.min]
                    for await note in stream {
                        if note.seq <= last[note.thread] { outOfOrder.increment() }
                        last[note.thread] = note.seq
                        streamed.increment()
                    }
                })
            let stop = Shared(false)
            let racing = DispatchSemaphore(value: 0)
            Thread.detach {
                // Races the teardown through a weak reference: dispatch, make streams and main-actor
                // subscriptions, drop them.
                var seq = 0
                while !stop.value {
                    if let bus = weakBus {
                        bus.dispatch(Note(thread: 1, seq: seq))
                        _ = bus.events(of: Note.self)
                        bus.on(Note.self).onMainActor().next { _ in }.dispose()
                    }
                    seq += 1
                }
                racing.signal()
            }
            bus?.dispatch(Note(thread: 0, seq: 0))
            bus = nil
            let deallocated = await waitUntil { weakBus == nil }
            #expect(deallocated)
            stop.withLock { $0 = true }
            #expect(await waitUntil { racing.wait(timeout: .now()) == .success })
        }
        // Every stream finishes with its bus; every delivery left on the main queue is refused or run.
        var allFinished = true
        for consumer in consumers {
            allFinished = await AsyncWait.value { await consumer.value } != nil && allFinished
        }
        #expect(allFinished, "a stream did not finish when its bus was deallocated")
        #expect(MainQueue.drain())
        #expect(outOfOrder.value == 0)
        print(
            "bad input: \(rounds) buses with main-actor subscribers and a stream torn down while another thread "
                + "dispatched and subscribed; \(streamed.value) events streamed, \(mainActorCalls.value) main-actor deliveries, "
                + "every stream finished")
    }
}
