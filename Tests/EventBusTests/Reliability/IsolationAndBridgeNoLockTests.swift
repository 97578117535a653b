import Dispatch
import Foundation
import Testing

@testable import EventBus
@testable import EventBusFoundation

extension Notification.Name {
    static let reliabilityProbe = Notification.Name("EventBusTests.reliability.probe")
}

/// Battery item 3 for the paths added with main-actor subscribers, event streams and the
/// NotificationCenter bridge: the user code on each path asks a `BusCallProbe` thread to call into
/// the same bus and waits for it (timed). If the bus held its lock around that user code, the
/// probe would block on it and the wait would time out: the test fails instead of hanging.
@Suite("Reliability: no user code under the bus lock (isolation and bridge paths)", .tags(.stress), .offThePool)
struct IsolationAndBridgeNoLockTests {
    struct Ping: Event {}

    /// An event carrying an object whose `deinit` is user code.
    struct Parcel: Event {
        let payload: DeinitAction
    }

    struct Typed: Event {
        let value: Int
    }

    enum Path: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// A main-actor handler called from a background dispatch (enqueued on the main queue).
        case mainActorHandlerEnqueued
        /// A main-actor handler called synchronously by a dispatch made on the main queue.
        case mainActorHandlerOnMainQueue
        /// The owner-passing main-actor handler, enqueued.
        case mainActorOwnerPassingHandler
        /// A stream's yield with `.bufferingNewest(1)` drops the buffered event, whose payload's
        /// deinit runs inside `dispatch`.
        case streamYieldDropsBufferedEvent
        /// A consumer of a stream, woken by the yield inside `dispatch`, waits for the probe while
        /// the dispatching thread goes on.
        case streamConsumer
        /// A bus subscriber to a notification name, called from the bridge's observer block.
        case bridgedNotificationHandler
        /// The converter of `bridge(notification:to:)`.
        case inboundConverter
        /// The issue handler, for a converter that returned nil (reported on the posting thread).
        case issueHandlerConversionFailed
        /// The issue handler, for a subscription without a name (reported on the subscribing thread).
        case issueHandlerUnnamedRefused
        /// The issue handler, for a subscription to a name starting with U+0000 (reported on the
        /// subscribing thread).
        case issueHandlerUnsupportedName
        /// The issue handler, for a refused outbound bridge.
        case issueHandlerBridgeRefused
        /// The converter of a typed bridge `bridge(E.self) { event in Notification }`.
        case outboundConverter
        /// A legacy observer of the notification a typed bridge posts, called inside `dispatch`.
        case legacyObserverOfOutboundPost
        var testDescription: String { rawValue }
    }

    @Test(
        "User code on the isolation and bridge paths can wait on a thread calling into the bus",
        arguments: Path.allCases)
    func userCodeIsNotUnderTheLock(path: Path) async {
        let center = NotificationCenter()
        let bus = EventBus(notificationCenter: center)
        let probe = BusCallProbe()
        let outcomes = Shared<[Bool]>([])
        // User code holds the bus weakly, or handlers would keep it (and themselves) alive.
        weak let weakBus = bus
        @Sendable func userCode() {
            guard let target = weakBus else { return }
            let completed = probe.completes { BusCallProbe.touch(target) }
            outcomes.withLock { $0.append(completed) }
        }

        switch path {
        case .mainActorHandlerEnqueued:
            _ = bus.on(Ping.self).onMainActor().next { _ in userCode() }
            #expect(onAnotherThread { bus.dispatch(Ping()) })
            #expect(MainQueue.drain())
        case .mainActorHandlerOnMainQueue:
            _ = bus.on(Ping.self).onMainActor().next { _ in userCode() }
            let delivered = MainQueue.run { () -> Int in
                bus.dispatch(Ping())
                return outcomes.value.count
            }
            #expect(delivered == 1, "the dispatch on the main queue called the handler before returning")
        case .mainActorOwnerPassingHandler:
            let owner = Sentinel()
            bus.on(Ping.self).onMainActor().freeWith(owner).next { _, _ in userCode() }
            #expect(onAnotherThread { bus.dispatch(Ping()) })
            #expect(MainQueue.drain())
            withExtendedLifetime(owner) {}
        case .streamYieldDropsBufferedEvent:
            let stream = bus.events(of: Parcel.self, buffering: .bufferingNewest(1))
            bus.dispatch(Parcel(payload: DeinitAction { userCode() }))
            bus.dispatch(Parcel(payload: DeinitAction {}))  // drops the first, inside this dispatch
            #expect(outcomes.value.count == 1, "the dropped event was released by the second dispatch")
            withExtendedLifetime(stream) {}
        case .streamConsumer:
            let stream = bus.events(of: Ping.self)
            // Its user code waits for the probe: off the cooperative pool (see OffThePool.swift).
            let consumer = Task(executorPreference: OffThePoolExecutor.shared) {
                for await _ in stream {
                    userCode()
                    break
                }
            }
            bus.dispatch(Ping())
            _ = await AsyncWait.value { await consumer.value }
        case .bridgedNotificationHandler:
            _ = bus.on(notification: .reliabilityProbe).next { _ in userCode() }
            center.post(name: .reliabilityProbe, object: nil)
            bus.post(Notification(name: .reliabilityProbe))
        case .inboundConverter:
            bus.bridge(notification: .reliabilityProbe, to: Typed.self) { _ in
                userCode()
                return Typed(value: 1)
            }
            let typed = Shared(0)
            _ = bus.on(Typed.self).next { _ in typed.increment() }
            center.post(name: .reliabilityProbe, object: nil)
            #expect(typed.value == 1)
        case .issueHandlerConversionFailed:
            bus.notificationBridgeIssueHandler = { _ in userCode() }
            bus.bridge(notification: .reliabilityProbe, to: Typed.self) { _ in nil }
            center.post(name: .reliabilityProbe, object: nil)
        case .issueHandlerUnnamedRefused:
            bus.notificationBridgeIssueHandler = { _ in userCode() }
            let token = bus.on(NotificationEvent.self).next { _ in }
            #expect(token.isDisposed)
        case .issueHandlerUnsupportedName:
            bus.notificationBridgeIssueHandler = { _ in userCode() }
            let token = bus.on(notification: Notification.Name("\u{0}probe")).next { _ in }
            #expect(token.isDisposed)
        case .issueHandlerBridgeRefused:
            bus.notificationBridgeIssueHandler = { _ in userCode() }
            let token = bus.bridge(NotificationEvent.self) { $0.notification }
            #expect(token.isDisposed)
        case .outboundConverter:
            bus.bridge(Typed.self) { event in
                userCode()
                return Notification(name: .reliabilityProbe, object: nil, userInfo: ["value": event.value])
            }
            bus.dispatch(Typed(value: 1))
        case .legacyObserverOfOutboundPost:
            let observer = center.addObserver(forName: .reliabilityProbe, object: nil, queue: nil) { _ in userCode() }
            defer { center.removeObserver(observer) }
            bus.bridge(Typed.self) { event in
                Notification(name: .reliabilityProbe, object: nil, userInfo: ["value": event.value])
            }
            bus.dispatch(Typed(value: 1))
        }
        let results = outcomes.value
        #expect(!results.isEmpty, "the user code did not run")
        #expect(
            results.allSatisfy { $0 }, "user code waited on a bus call that could not complete: the bus held its lock")
        print(
            "no-lock probe \(path.rawValue): user code ran \(results.count)×, every bus call completed: \(results.allSatisfy { $0 })"
        )
    }
}
