import Dispatch
import Testing

@testable import EventBus

/// Nothing is dropped silently. Under load — 4 producers, subscriptions of every
/// off-thread mode and bound, disposes, actor deaths, a cancelled stream and a bus released with
/// deliveries waiting — every delivery offered to a mailbox is accounted for, exactly:
/// offered = delivered + dropped + pending + ended unrun.
/// The offered count is kept in debug builds only (`BusCore.offeredDeliveries`): the suite runs there.
@Suite(
    "Flow control: the delivery invariant under load", .tags(.stress), .offThePool,
    .enabled(if: isDebugBuild, "the bus counts offered deliveries in debug builds only")
)
struct FlowControlInvariantTests {
    struct Load: Event {
        let number: Int
    }

    actor Consumer {
        let delivered: Shared<Int>
        init(_ delivered: Shared<Int>) { self.delivered = delivered }
        func take() { delivered.increment() }
    }

    @Test(
        "offered = delivered + dropped + pending + ended unrun, with disposes, actor deaths, a cancelled stream and a gone bus"
    )
    func invariant() async {
        let delivered = Shared(0)
        var cores: [BusCore] = []
        var rounds = 0
        var offeredTotal = 0
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(stressSeconds * 1e9)
        repeat {
            rounds += 1
            let bus = EventBus()
            cores.append(bus.core)
            let queue = DispatchQueue(label: "invariant.\(rounds)")
            var tokens: [EventToken] = []
            let bounds: [EventBuffering] = [
                .unbounded, .bufferingNewest(7), .bufferingOldest(5), .backPressure(highWatermark: 3, limit: 9),
            ]
            for bound in bounds {
                tokens.append(bus.on(Load.self).atQueue(queue).buffering(bound).next { _ in delivered.increment() })
            }
            var actors: [Consumer?] = (0..<4).map { _ in Consumer(delivered) }
            for (index, actor) in actors.enumerated() {
                tokens.append(
                    bus.on(Load.self).isolated(to: actor!).buffering(bounds[index]).next { consumer, _ in
                        consumer.take()
                    })
            }
            let stream = bus.events(of: Load.self, buffering: .bufferingNewest(50))
            let consumer = Task.detached {
                var count = 0
                for await _ in stream {
                    count += 1
                    delivered.increment()
                    if count == 20 { break }  // then the stream ends with events buffered
                }
            }
            let kept = bus.events(of: Load.self, buffering: .bufferingOldest(10))  // never consumed
            // 4 producers; meanwhile half the tokens are disposed and two actors die.
            let disposer = DispatchQueue(label: "invariant.disposer.\(rounds)")
            let disposable = Array(tokens.prefix(4))
            disposer.async {
                usleepMilliseconds(1)
                for token in disposable where Bool.random() { token.dispose() }
            }
            _ = await offThePool {
                concurrently(4) { producer in
                    for number in 0..<500 { bus.dispatch(Load(number: producer * 1_000 + number)) }
                }
            }
            actors[1] = nil
            actors[3] = nil
            await consumer.value
            _ = await offThePool { drain(disposer) }
            let settled =
                (try? await bus.settleEnqueued(deadline: DispatchTime.now().uptimeNanoseconds + 60_000_000_000)) ?? -1
            #expect(settled == 0, "every enqueued delivery ran or ended")
            let core = bus.core
            let pending = bus.subscriptions.reduce(0) { $0 + $1.pendingCount }
            offeredTotal += core.offeredDeliveries.current
            let accounted =
                delivered.value + core.droppedDeliveries.current + pending + core.endedUnrunDeliveries.current
            #expect(
                core.offeredDeliveries.current == accounted,
                "round \(rounds): offered \(core.offeredDeliveries.current), delivered \(delivered.value), dropped \(core.droppedDeliveries.current), pending \(pending), ended unrun \(core.endedUnrunDeliveries.current)"
            )
            withExtendedLifetime((kept, actors)) {}
            delivered.withLock { $0 = 0 }
            for token in tokens { token.dispose() }
        } while DispatchTime.now().uptimeNanoseconds < deadline
        print(
            "flow-control invariant: \(rounds) rounds, \(offeredTotal) deliveries offered to 10 subscriptions per round, every one accounted for"
        )
    }

    @Test("A bus released with deliveries waiting ends them unrun, and counts them")
    func busGone() async {
        let delivered = Shared(0)
        var bus: EventBus? = EventBus()
        let core = bus!.core
        let queue = DispatchQueue(label: "invariant.gone")
        queue.suspend()
        _ = bus!.on(Load.self).atQueue(queue).next { _ in delivered.increment() }
        for number in 0..<100 { bus!.dispatch(Load(number: number)) }
        bus = nil
        queue.resume()
        #expect(drain(queue))
        #expect(await waitUntil { core.endedUnrunDeliveries.current == 100 })
        #expect(delivered.value == 0)
        #expect(core.offeredDeliveries.current == 100)
    }
}

/// Whether this is a debug build (where the bus counts offered deliveries).
private var isDebugBuild: Bool {
    #if DEBUG
        true
    #else
        false
    #endif
}
