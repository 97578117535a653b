import Dispatch
import Testing

@testable import EventBus

/// Bounds and policies, one spelling for every mode that leaves the dispatching thread; nothing is
/// dropped silently.
@Suite("Flow control: bounds, drops and back-pressure", .offThePool)
struct BufferingTests {
    struct Tick: Event {
        let number: Int
    }

    actor Sink {
        var numbers: [Int] = []
        let count = Shared(0)
    }

    @Test("bufferingNewest(n) on a blocked queue keeps the newest n; every drop is counted and traced")
    func newestOnQueue() {
        let bus = EventBus()
        let traced = Shared(0)
        bus.tracer = { record in if case .dropped = record { traced.increment() } }
        let queue = DispatchQueue(label: "bounded.newest")
        let seen = Shared<[Int]>([])
        let token = bus.on(Tick.self).atQueue(queue).buffering(.bufferingNewest(10)).next { tick in
            seen.withLock { $0.append(tick.number) }
        }
        queue.suspend()
        for number in 0..<10_000 { bus.dispatch(Tick(number: number)) }
        let info = token.info!
        #expect(info.pendingCount == 10)
        #expect(info.droppedCount == 9_990)
        #expect(info.buffering == .bufferingNewest(10))
        #expect(bus.droppedDeliveryCount == 9_990)
        #expect(traced.value == 9_990)
        queue.resume()
        #expect(waitUntil { seen.value.count == 10 })
        #expect(drain(queue))
        #expect(seen.value == Array(9_990..<10_000))
        #expect(token.info?.pendingCount == 0)
        token.dispose()
    }

    /// A sink on a queue the test suspends (no thread is blocked while deliveries wait).
    actor HeldSink {
        static let executor = MailboxOrderTests.SuspendableExecutor(label: "BufferingTests.sink")
        var numbers: [Int] = []
        let count = Shared(0)
        nonisolated var unownedExecutor: UnownedSerialExecutor { Self.executor.asUnownedSerialExecutor() }
    }

    @Test("bufferingOldest(n) on an actor keeps the first n; a dispatch that drops is dead if it reached nobody else")
    func oldestOnActor() async {
        let bus = EventBus()
        let dead = Shared(0)
        bus.deadEventHandler = { _ in dead.increment() }
        let sink = HeldSink()
        let token = bus.on(Tick.self).isolated(to: sink).buffering(.bufferingOldest(5)).next { sink, tick in
            sink.numbers.append(tick.number)
            sink.count.increment()
        }
        HeldSink.executor.queue.suspend()
        for number in 0..<100 { bus.dispatch(Tick(number: number)) }
        #expect(token.info?.pendingCount == 5)
        #expect(token.info?.droppedCount == 95)
        #expect(dead.value == 95)
        HeldSink.executor.queue.resume()
        #expect(await waitUntil(timeout: actorTimeout) { sink.count.value == 5 })
        #expect(await sink.numbers == [0, 1, 2, 3, 4])
        token.dispose()
    }

    @Test("A dropped .untilDelivered event stays kept for the next taker")
    func droppedStickyStaysKept() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "bounded.sticky")
        let token = bus.on(Tick.self).atQueue(queue).buffering(.bufferingOldest(0)).next { _ in }
        bus.dispatch(Tick(number: 7), sticky: .untilDelivered)
        #expect(token.info?.droppedCount == 1)
        #expect(drain(queue))
        #expect(bus.stickyEvents(Tick.self).map(\.number) == [7])
        let taken = Shared<[Int]>([])
        let taker = bus.on(Tick.self).replayingSticky().next { tick in taken.withLock { $0.append(tick.number) } }
        #expect(taken.value == [7])
        #expect(bus.stickyEvents(Tick.self).isEmpty)
        token.dispose()
        taker.dispose()
    }

    @Test("A stream's bound: bufferingNewest keeps the newest, the deprecated AsyncStream policy maps to it")
    func streamBound() async {
        let bus = EventBus()
        let stream = bus.events(of: Tick.self, buffering: .bufferingNewest(3))
        for number in 0..<100 { bus.dispatch(Tick(number: number)) }
        #expect(bus.subscriptions.first?.pendingCount == 3)
        #expect(bus.subscriptions.first?.droppedCount == 97)
        #expect(bus.subscriptions.first?.delivery == .stream)
        var iterator = stream.makeAsyncIterator()
        var got: [Int] = []
        for _ in 0..<3 { if let tick = await iterator.next() { got.append(tick.number) } }
        #expect(got == [97, 98, 99])
        #expect(
            EventBuffering(AsyncStream<Tick>.Continuation.BufferingPolicy.bufferingOldest(4)) == .bufferingOldest(4))
    }

    @Test("Back-pressure: send waits above the high watermark; dispatch never waits, and drops above the limit")
    func backPressure() async {
        let bus = EventBus()
        let queue = DispatchQueue(label: "bounded.pressure")
        let seen = Shared(0)
        let token = bus.on(Tick.self).atQueue(queue).buffering(.backPressure(highWatermark: 4, limit: 8)).next { _ in
            seen.increment()
        }
        queue.suspend()
        for number in 0..<5 { await bus.send(Tick(number: number)) }
        #expect(token.info?.pendingCount == 5, "send enqueues up to the high watermark + 1")
        let sent = Shared(false)
        let sender = Task.detached {
            await bus.send(Tick(number: 5))
            sent.withLock { $0 = true }
        }
        usleepMilliseconds(20)
        #expect(!sent.value, "a send above the high watermark waits")
        for number in 6..<20 { bus.dispatch(Tick(number: number)) }
        #expect(token.info?.pendingCount == 8, "dispatch fills up to the limit")
        #expect(token.info?.droppedCount == 11, "and drops above it")
        queue.resume()
        await sender.value
        #expect(await waitUntil { seen.value == 9 })
        token.dispose()
    }

    @Test("Cancelling a waiting send dispatches at once")
    func cancelledSend() async {
        let bus = EventBus()
        let queue = DispatchQueue(label: "bounded.cancel")
        let token = bus.on(Tick.self).atQueue(queue).buffering(.backPressure(highWatermark: 0, limit: 2)).next { _ in }
        queue.suspend()
        bus.dispatch(Tick(number: 0))
        let sender = Task.detached { await bus.send(Tick(number: 1)) }
        usleepMilliseconds(10)
        sender.cancel()
        await sender.value
        #expect(token.info?.pendingCount == 2)
        queue.resume()
        #expect(drain(queue))
        token.dispose()
    }

    @Test("Bad bounds are clamped: a negative limit keeps nothing, a limit below the watermark is raised to it")
    func clamped() {
        #expect(EventBuffering.bufferingNewest(-3) == .bufferingNewest(0))
        #expect(EventBuffering.backPressure(highWatermark: 10, limit: 2).limit == 10)
        #expect(EventBuffering.backPressure(highWatermark: -1, limit: -1).limit == 0)
        #expect("\(EventBuffering.backPressure(highWatermark: 1, limit: 5))" == "back-pressure 1/5")
    }
}
