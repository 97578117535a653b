import Dispatch
import Foundation
import Testing

@testable import EventBus
@testable import EventBusFoundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Notification.Name {
    static let reliabilityA = Notification.Name("EventBusTests.reliability.A")
    static let reliabilityB = Notification.Name("EventBusTests.reliability.B")
}

/// Battery item 1, NotificationCenter-bridge variant: 3 threads post with the legacy
/// `NotificationCenter.post` (names A and B alternately) while 2 threads subscribe the bus to A, B
/// or both and dispose, so the bridge's observer for B comes and goes (A keeps 4 stable
/// subscribers and an inbound typed bridge whose converter refuses every other A post). A shared
/// logical clock stamps every post and every subscribe/dispose call.
@Suite("Reliability: bridge oracle", .tags(.stress), .offThePool)
struct BridgeOracleTests {
    static let posters = 3
    static let churners = 2
    static let stable = 4

    /// The typed event the inbound bridge converts A posts to (only those with seq % 4 == 0).
    struct Converted: Event {
        let thread: Int
        let seq: Int
    }

    enum Names: CaseIterable {
        case a, b, both
        /// Posts of even seq are named A, odd ones B.
        func accepts(_ seq: Int) -> Bool {
            switch self {
            case .a: seq % 2 == 0
            case .b: seq % 2 != 0
            case .both: true
            }
        }
    }

    struct Churn {
        let seqs: Shared<[[Int]]>
        let names: Names
        let subscribeCalled: Int, subscribeReturned: Int, mustEnd: Int, disposeReturned: Int
    }

    static func stamp(of event: NotificationEvent) -> (thread: Int, seq: Int)? {
        guard let thread = event.userInfo?["thread"] as? Int, let seq = event.userInfo?["seq"] as? Int else {
            return nil
        }
        return (thread, seq)
    }

    @Test(
        "Legacy posts from 3 threads while subscriptions come and go: exactly once, nothing after dispose, observers gone at the end"
    )
    func bridgeOracle() async {
        let center = NotificationCenter()
        let bus = EventBus(notificationCenter: center)
        let issues = Shared(0)
        let otherIssues = Shared<[String]>([])
        bus.notificationBridgeIssueHandler = { issue in
            if case .conversionFailed = issue { issues.increment() } else { otherIssues.append("\(issue)") }
        }
        let clock = LogicalClock()
        let started = DispatchTime.now()
        let deadline = started.uptimeNanoseconds + UInt64(stressSeconds * 1e9)
        @Sendable func timeIsUp() -> Bool { DispatchTime.now().uptimeNanoseconds >= deadline }
        let malformed = Shared(0)

        let stable = (0..<Self.stable).map { _ in
            let seqs = Shared([[Int]](repeating: [], count: Self.posters))
            let token = bus.on(notification: .reliabilityA).next { event in
                guard let (thread, seq) = Self.stamp(of: event) else { return malformed.increment() }
                seqs.withLock { $0[thread].append(seq) }
            }
            return (seqs, token)
        }
        let bridge = bus.bridge(notification: .reliabilityA, to: Converted.self) { notification in
            guard let thread = notification.userInfo?["thread"] as? Int,
                let seq = notification.userInfo?["seq"] as? Int,
                seq % 4 == 0
            else { return nil }
            return Converted(thread: thread, seq: seq)
        }
        let converted = Shared([[Int]](repeating: [], count: Self.posters))
        let typed = bus.on(Converted.self).next { event in converted.withLock { $0[event.thread].append(event.seq) } }
        let startCount = bus.subscriptionCount(of: NotificationEvent.self)
        #expect(startCount == Self.stable + 1, "the stable subscribers and the bridge, which is the app's: counted")

        let observerCountViolations = Shared<[String]>([])
        let maxInstalled = Shared(0)
        let postStamps = Shared([[(start: Int, end: Int)]](repeating: [], count: Self.posters))
        let churns = Shared([Churn]())
        let finished = await concurrentlyAwaiting(Self.posters + Self.churners, within: UInt64(stressSeconds) + 60) {
            thread in
            if thread < Self.posters {
                var stamps: [(start: Int, end: Int)] = []
                var seq = 0
                while seq % 64 != 0 || !timeIsUp() {
                    let name: Notification.Name = seq % 2 == 0 ? .reliabilityA : .reliabilityB
                    let start = clock.tick()
                    center.post(name: name, object: nil, userInfo: ["thread": thread, "seq": seq])
                    stamps.append((start, clock.tick()))
                    seq += 1
                }
                postStamps.withLock { $0[thread] = stamps }
            } else {
                var random = SplitMix64(seed: UInt64(thread) &* 32_452_843)
                var made: [Churn] = []
                while !timeIsUp() {
                    let names = Names.allCases[random.next(below: 3)]
                    let seqs = Shared([[Int]](repeating: [], count: Self.posters))
                    let maker: SubscriberMaker<NotificationEvent, Never, EventDelivery.Synchronous>
                    switch names {
                    case .a: maker = bus.on(notification: .reliabilityA)
                    case .b: maker = bus.on(notification: .reliabilityB)
                    case .both: maker = bus.on(notification: .reliabilityB).ofType(.reliabilityA)
                    }
                    let subscribeCalled = clock.tick()
                    let token = maker.next { event in
                        guard let (thread, seq) = Self.stamp(of: event) else { return malformed.increment() }
                        seqs.withLock { $0[thread].append(seq) }
                    }
                    let subscribeReturned = clock.tick()
                    // While this subscription lives, its names are observed: A always (the stable
                    // subscribers), B too if it names B. Retiring B observers a post or a dispose
                    // still holds may add a few, never more than one per thread.
                    let installed = bus.notificationHooks.installedObservers.withLock { $0 }
                    let atLeast = names == .a ? 1 : 2
                    if installed < atLeast || installed > 2 + Self.posters + Self.churners {
                        observerCountViolations.append(
                            "\(installed) observers installed during a subscription to \(names)")
                    }
                    maxInstalled.withLock { $0 = max($0, installed) }
                    let until = subscribeReturned + random.next(below: 40)
                    while clock.now < until, !timeIsUp() { sched_yield() }
                    let mustEnd = clock.tick()
                    token.dispose()
                    made.append(
                        Churn(
                            seqs: seqs, names: names, subscribeCalled: subscribeCalled,
                            subscribeReturned: subscribeReturned,
                            mustEnd: mustEnd, disposeReturned: clock.tick()))
                }
                churns.withLock { $0 += made }
            }
        }
        #expect(finished, "stress threads did not finish in time (deadlock?)")
        guard finished else { return }

        let stamps = postStamps.value
        let violations = Violations()
        var stableDeliveries = 0
        for (index, (seqs, _)) in stable.enumerated() {
            let got = seqs.value
            for thread in 0..<Self.posters {
                stableDeliveries += got[thread].count
                let expected = (0..<stamps[thread].count).filter { $0 % 2 == 0 }
                if got[thread] != expected {
                    violations.add(
                        "stable subscriber #\(index) got \(got[thread].count) of \(expected.count) A posts of thread \(thread), or out of order"
                    )
                }
            }
        }
        let convertedGot = converted.value
        var refused = 0
        for thread in 0..<Self.posters {
            let expected = (0..<stamps[thread].count).filter { $0 % 4 == 0 }
            refused += (0..<stamps[thread].count).filter { $0 % 4 == 2 }.count
            if convertedGot[thread] != expected {
                violations.add(
                    "typed subscriber got \(convertedGot[thread].count) of \(expected.count) converted posts of thread \(thread), or out of order"
                )
            }
        }
        var churnDeliveries = 0
        var required = 0
        let made = churns.value
        for (index, churn) in made.enumerated() {
            let counts = checkWindow(
                "churn #\(index) (\(churn.names))", got: churn.seqs.value, stamps: stamps,
                subscribeCalled: churn.subscribeCalled, subscribeReturned: churn.subscribeReturned,
                mustEnd: churn.mustEnd, disposeReturned: churn.disposeReturned,
                accepts: churn.names.accepts, into: violations)
            churnDeliveries += counts.received
            required += counts.required
        }
        #expect(violations.isEmpty, "\(violations.description)")
        #expect(observerCountViolations.value.isEmpty, "\(observerCountViolations.value.prefix(5))")
        #expect(malformed.value == 0)
        #expect(
            issues.value == refused, "each refused conversion is reported once: \(issues.value) reports for \(refused)")
        #expect(otherIssues.value.isEmpty)
        #expect(made.count > 0 && stamps.allSatisfy { !$0.isEmpty })
        let endCount = bus.subscriptionCount(of: NotificationEvent.self)
        #expect(endCount == startCount, "notification subscriptions started at \(startCount), ended at \(endCount)")

        // The churn left no observer for B, only A's (the stable subscribers and the bridge hold
        // it); once they end, none. A post after that reaches no subscriber: a stable one would
        // count it as malformed (no stamp), the bridge's converter would report it as refused.
        let installedAfterChurn = bus.notificationHooks.installedObservers.withLock { $0 }
        #expect(
            installedAfterChurn == 1, "\(installedAfterChurn) observers installed for the one name still subscribed (A)"
        )
        for (_, token) in stable { token.dispose() }
        #expect(bus.notificationHooks.installedObservers.withLock { $0 } == 1, "the bridge still holds A's observer")
        bridge.dispose()
        typed.dispose()
        let installedAtEnd = bus.notificationHooks.installedObservers.withLock { $0 }
        #expect(installedAtEnd == 0, "\(installedAtEnd) observers still installed after every subscription ended")
        let legacy = Shared(0)
        let observers = [Notification.Name.reliabilityA, .reliabilityB].map { name in
            center.addObserver(forName: name, object: nil, queue: nil) { _ in legacy.increment() }
        }
        center.post(name: .reliabilityA, object: nil)
        center.post(name: .reliabilityB, object: nil)
        for observer in observers { center.removeObserver(observer) }
        #expect(legacy.value == 2)
        #expect(malformed.value == 0 && issues.value == refused, "a subscriber got a post made after it ended")
        #expect(bus.subscriptionCount == 0)

        let posts = stamps.map(\.count).reduce(0, +)
        print(
            "bridge oracle, \(formatted(secondsSince(started))) s: \(Self.posters) threads posted \(posts) notifications "
                + "(A and B alternately), \(Self.churners) threads made and disposed \(made.count) bus subscriptions "
                + "(\(made.filter { $0.names == .b }.count) to B only, \(made.filter { $0.names == .both }.count) to both), "
                + "\(Self.stable) stable subscribers got \(stableDeliveries) deliveries, the typed subscriber "
                + "\(convertedGot.map(\.count).reduce(0, +)) converted events (\(refused) posts refused by the converter and "
                + "reported), churn subscribers \(churnDeliveries) (\(required) required by the stamps); "
                + "\(maxInstalled.value) observers installed at most during the churn, "
                + "\(installedAfterChurn) after it (A's), none after the last subscription ended"
        )
    }
}
