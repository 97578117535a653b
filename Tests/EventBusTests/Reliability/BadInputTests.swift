import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

/// Battery item 7: DESIGN.md §8. No input crashes the library; each misuse has the documented outcome.
@Suite("Reliability: bad input", .tags(.stress), .offThePool)
struct BadInputTests {
    struct Note: Event {
        var key: String? = nil
        var eventType: String? { key }
    }

    @Test("Disposing twice is a no-op the second time")
    func disposeTwice() {
        let bus = EventBus()
        let calls = Shared(0)
        let other = bus.on(Note.self).next { _ in }
        let token = bus.on(Note.self).next { _ in calls.increment() }
        token.dispose()
        token.dispose()
        #expect(token.isDisposed && !other.isDisposed)
        #expect(bus.subscriptionCount == 1)
        bus.dispatch(Note())
        #expect(calls.value == 0)
    }

    @Test("Disposing the same tokens from 8 threads at once ends each exactly once")
    func disposeFromManyThreads() {
        let rounds = 20
        let perRound = 200
        let released = Shared(0)
        for _ in 0..<rounds {
            let bus = EventBus()
            let tokens = (0..<perRound).map { index -> EventToken in
                let capture = DeinitAction { released.increment() }
                var maker = bus.on(Note.self)
                if index % 2 == 0 { maker = maker.ofType("a").ofType("b") }
                return maker.next { _ in withExtendedLifetime(capture) {} }
            }
            let arrived = Shared(0)
            let finished = concurrently(8) { thread in
                // Start together: wait until all 8 threads are here (bounded).
                arrived.increment()
                _ = waitUntil { arrived.value == 8 }
                for token in thread % 2 == 0 ? tokens : tokens.reversed() { token.dispose() }
            }
            #expect(finished)
            #expect(bus.subscriptionCount == 0)
            #expect(tokens.allSatisfy { $0.isDisposed })
        }
        #expect(released.value == rounds * perRound)
        print(
            "bad input: \(rounds) × \(perRound) tokens disposed by 8 threads at once; \(released.value) closures released once each"
        )
    }

    @Test("freeWith an owner that is already gone, or nil, yields an inert, disposed token")
    func freeWithGoneOwner() {
        let bus = EventBus()
        let calls = Shared(0)
        var strong: Sentinel? = Sentinel()
        weak let gone = strong
        strong = nil
        let tokens = [
            bus.on(Note.self).freeWith(gone).next { _, _ in calls.increment() },
            bus.on(Note.self).freeWith(gone).next { _, _ in calls.increment() },
            bus.on(Note.self).freeWith(nil as Sentinel?).next { _, _ in calls.increment() },
        ]
        // An owner that dies between `freeWith` and `next`.
        var owner: Sentinel? = Sentinel()
        let maker = bus.on(Note.self).ofType("k").freeWith(owner)
        owner = nil
        let late = maker.next { _, _ in calls.increment() }
        for token in tokens + [late] {
            #expect(token.isDisposed)
            #expect(token.id == 0)
            token.dispose()
        }
        #expect(bus.subscriptionCount == 0)
        bus.dispatch(Note())
        bus.dispatch(Note(key: "k"))
        #expect(calls.value == 0)
    }

    @Test("Tokens and bags outliving their bus: dispose is a no-op, nothing crashes")
    func tokensOutliveTheBus() {
        var bus: EventBus? = EventBus()
        let bag = DisposeBag()
        let token = bus!.on(Note.self).next { _ in }
        bus!.on(Note.self).next { _ in }.disposed(by: bag)
        weak let weakBus = bus
        bus = nil
        #expect(weakBus == nil)
        #expect(token.isDisposed)  // the bus's deinit ended it
        token.dispose()
        bag.dispose()
        bag.dispose()
        #expect(bag.count == 0)
    }

    @Test("Queued deliveries still waiting when the bus is deallocated never start")
    func queuedDeliveriesDieWithTheBus() {
        let queue = DispatchQueue(label: "badinput.queued")
        let gate = DispatchSemaphore(value: 0)
        let calls = Shared(0)
        var bus: EventBus? = EventBus()
        _ = bus!.on(Note.self).atQueue(queue).next { _ in calls.increment() }
        queue.async { _ = gate.wait(timeout: .now() + defaultTimeout) }
        for _ in 0..<10 { bus!.dispatch(Note()) }
        bus = nil
        gate.signal()
        #expect(drain(queue))
        #expect(calls.value == 0)
    }

    @Test("Dispatching, subscribing and disposing while the bus is being torn down")
    func dispatchDuringTeardown() {
        let rounds = 200
        let calls = Shared(0)
        let deinits = Shared(0)
        let witness = EventBus()
        _ = witness.on(Note.self).next { _ in calls.increment() }
        let queue = DispatchQueue(label: "badinput.teardown")
        for round in 0..<rounds {
            var bus: EventBus? = EventBus()
            weak let weakBus = bus
            let tokens = Shared<[EventToken]>([])
            for index in 0..<10 {
                // Released by the bus's deinit: dispatches on the dying bus (through a weak
                // reference), disposes its tokens, and dispatches on another bus.
                let capture = DeinitAction {
                    deinits.increment()
                    weakBus?.dispatch(Note())
                    for token in tokens.value { token.dispose() }
                    witness.dispatch(Note())
                }
                var maker = bus!.on(Note.self)
                if index % 3 == 1 { maker = maker.ofType("k") }
                let token = maker.next(on: index % 3 == 0 ? queue : nil) { _ in
                    withExtendedLifetime(capture) { calls.increment() }
                }
                tokens.withLock { $0.append(token) }
            }
            let stop = Shared(false)
            let racing = DispatchSemaphore(value: 0)
            Thread.detach {
                // Races the teardown: dispatch and subscribe through a weak reference, dispose tokens.
                while !stop.value {
                    if let bus = weakBus {
                        bus.dispatch(Note(key: round % 2 == 0 ? "k" : nil))
                        bus.on(Note.self).next { _ in }.dispose()
                    }
                    for token in tokens.value.prefix(3) { token.dispose() }
                }
                racing.signal()
            }
            bus?.dispatch(Note())
            bus = nil
            let deallocated = waitUntil { weakBus == nil }
            #expect(deallocated)
            stop.withLock { $0 = true }
            #expect(racing.wait(timeout: .now() + defaultTimeout) == .success)
            #expect(tokens.value.allSatisfy { $0.isDisposed })
        }
        #expect(drain(queue))
        #expect(deinits.value == rounds * 10)
        print(
            "bad input: \(rounds) buses torn down while another thread dispatched, subscribed and disposed; "
                + "\(deinits.value) captured objects released, \(calls.value) deliveries")
    }

    @Test("Odd keys: empty, repeated, long and non-ASCII keys route exactly")
    func oddKeys() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let long = String(repeating: "ключ🔑", count: 2_000)
        for key in ["", long, "é", "e\u{301}"] {
            _ = bus.on(Note.self).ofType(key).ofType(key).next { log.append("[\($0.key!.count)]") }
        }
        bus.dispatch(Note(key: ""))
        bus.dispatch(Note(key: long))
        bus.dispatch(Note(key: "é"))  // precomposed and decomposed "é" are equal Strings in Swift
        bus.dispatch(Note(key: "missing"))
        #expect(log.value == ["[0]", "[\(long.count)]", "[1]", "[1]"])
        #expect(bus.subscriptionCount == 4)
    }

    @Test("A DisposeBag given disposed, duplicate and foreign-bus tokens, then disposed twice")
    func bagMisuse() {
        let first = EventBus()
        let second = EventBus()
        let bag = DisposeBag()
        let disposed = first.on(Note.self).next { _ in }
        disposed.dispose()
        bag.insert(disposed)
        let token = first.on(Note.self).next { _ in }
        bag.insert(token)
        bag.insert(token)
        second.on(Note.self).next { _ in }.disposed(by: bag)
        #expect(bag.count == 2)
        bag.dispose()
        bag.dispose()
        #expect(first.subscriptionCount == 0 && second.subscriptionCount == 0)
        for _ in 0..<1_000 { first.on(Note.self).next { _ in }.disposed(by: bag) }
        bag.dispose()
        #expect(bag.count == 0 && first.subscriptionCount == 0)
    }
}
