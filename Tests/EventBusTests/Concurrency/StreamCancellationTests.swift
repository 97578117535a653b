import Dispatch
import Testing

@testable import EventBus  // test helpers only (Shared, AsyncWait); the bus is used through its public API

/// Cancelling the task that consumes a stream from the bus ends the
/// subscription (DESIGN §4): once `cancel()` has returned, no event dispatched afterwards reaches
/// the consumer — even one that was busy in its loop body when it was cancelled, and so was not
/// waiting in `next()`.
@Suite("Event streams: cancellation of a busy consumer", .tags(.stress), .offThePool)
struct StreamCancellationTests {
    struct Tick: Event {
        var seq: Int
        var key: String?
        var eventType: String? { key }
    }

    static let rounds = 50

    /// A one-shot gate a task awaits without blocking a thread (the cooperative pool has as few
    /// threads as cores, and parallel test cases must not starve it).
    final class Gate: Sendable {
        private let state = Shared<(opened: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

        func wait() async {
            await withCheckedContinuation { waiter in
                let openedAlready = state.withLock { state in
                    if !state.opened { state.waiter = waiter }
                    return state.opened
                }
                if openedAlready { waiter.resume() }
            }
        }

        func open() {
            let waiter = state.withLock { state in
                defer { state = (true, nil) }
                return state.waiter
            }
            waiter?.resume()
        }
    }

    /// One round: the consumer takes event 0 and stays busy in its loop body (suspended on a gate,
    /// not in the stream's `next()`) until released; the test cancels its task, dispatches events 1
    /// and 2 once `cancel()` has returned, then releases it. Returns what the consumer received, or
    /// `nil` if a wait timed out.
    static func round(_ makeStream: (EventBus) -> EventStream<Tick>, key: String?) async -> [Int]? {
        let bus = EventBus()
        let busy = Shared(false)
        let release = Gate()
        let consumer = Task { [stream = makeStream(bus)] () -> [Int] in
            var received: [Int] = []
            for await tick in stream {
                received.append(tick.seq)
                if tick.seq == 0 {
                    busy.withLock { $0 = true }
                    await release.wait()
                }
            }
            return received
        }
        bus.dispatch(Tick(seq: 0, key: key))
        // The consumer's task needs a thread of the cooperative pool (see `actorTimeout`).
        guard await waitUntil(timeout: actorTimeout, { busy.value }) else {
            release.open()
            consumer.cancel()
            return nil
        }
        consumer.cancel()
        // cancel() has returned: nothing dispatched from now on may reach the consumer.
        bus.dispatch(Tick(seq: 1, key: key))
        bus.dispatch(Tick(seq: 2, key: key))
        release.open()
        let received = await AsyncWait.value(within: 90) { await consumer.value }
        #expect(
            await waitUntil(timeout: actorTimeout) { bus.subscriptionCount == 0 },
            "the cancelled stream's subscription ended")
        return received
    }

    @Test(
        "a consumer busy in its loop body when its task is cancelled receives no event dispatched after cancel() returned (50 rounds)",
        arguments: ["bus.events(of:)", "bus.on(_:).ofType(_:).events()", "owner-bound events()"]
    )
    func cancelledWhileBusy(form: String) async {
        let owner = Sentinel()
        let makeStream: (EventBus) -> EventStream<Tick>
        let key: String?
        switch form {
        case "bus.events(of:)":
            makeStream = { $0.events(of: Tick.self) }
            key = nil
        case "bus.on(_:).ofType(_:).events()":
            makeStream = { $0.on(Tick.self).ofType("k").events() }
            key = "k"
        default:
            makeStream = { $0.on(Tick.self).freeWith(owner).events() }
            key = nil
        }
        var late = 0
        var timedOut = 0
        for _ in 0..<Self.rounds {
            guard let received = await Self.round(makeStream, key: key) else {
                timedOut += 1
                continue
            }
            #expect(received.first == 0, "the consumer got the event dispatched before cancel()")
            if received.count > 1 { late += 1 }
        }
        #expect(timedOut == 0)
        #expect(
            late == 0,
            "in \(late) of \(Self.rounds) rounds the cancelled consumer received events dispatched after cancel() returned"
        )
        print(
            "Stream cancellation (\(form)): \(Self.rounds) rounds of cancel-while-busy; "
                + "\(late) rounds yielded events dispatched after cancel() returned")
        withExtendedLifetime(owner) {}
    }
}
