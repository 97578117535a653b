import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

/// Battery item 2: the reentrancy matrix. From inside a handler: dispatch (same and other type),
/// subscribe, dispose self / an earlier / a later subscriber / all, release the owner, release a
/// captured object whose `deinit` dispatches or disposes; recursion depth 1,000. Each case runs with
/// synchronous delivery and with every subscriber on one serial `atQueue` queue, and checks the
/// exact delivery log.
///
/// In the queued mode the queue is held shut until the test's `dispatch` has returned, and the test
/// waits for the queue to go quiet before its next step, so the order in which the queue runs
/// deliveries (and releases their closures) does not race with the test.
@Suite("Reliability: reentrancy matrix", .tags(.stress), .offThePool)
struct ReentrancyMatrixTests {
    enum Mode: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sync, queued
        var testDescription: String { rawValue }
    }

    struct Tick: Event { let n: Int }
    struct Other: Event {}

    /// A fresh bus, a log, and (queued mode) the one serial queue every subscriber uses.
    ///
    /// Handlers capture the harness, which holds the bus: `close()` (deferred by every test) drops
    /// the bus, which releases the handlers, so nothing leaks under LeakSanitizer.
    final class Harness: Sendable {
        private let busBox = Shared<EventBus?>(EventBus())
        var bus: EventBus { busBox.value! }
        let log = Shared<[String]>([])
        let mode: Mode
        let queue = DispatchQueue(label: "EventBusTests.reentrancy")

        init(_ mode: Mode) { self.mode = mode }

        func on<E: Event>(_ type: E.Type) -> ModeMaker<E> {
            ModeMaker(maker: bus.on(type), queue: mode == .queued ? queue : nil)
        }

        /// A maker whose delivery (synchronous or queued) the harness's mode picks at run time.
        struct ModeMaker<E: Event> {
            var maker: SubscriberMaker<E, Never, EventDelivery.Synchronous>
            let queue: DispatchQueue?

            func ofType(_ key: String) -> ModeMaker<E> { ModeMaker(maker: maker.ofType(key), queue: queue) }

            @discardableResult
            func next(_ handler: @escaping @Sendable (E) -> Void) -> EventToken { maker.next(on: queue, handler) }

            func freeWith<Owner: AnyObject & Sendable>(_ owner: Owner?) -> OwnedModeMaker<E, Owner> {
                OwnedModeMaker(maker: maker.freeWith(owner), queue: queue)
            }
        }

        /// ``ModeMaker`` bound to an owner.
        struct OwnedModeMaker<E: Event, Owner: AnyObject & Sendable> {
            let maker: SubscriberMaker<E, Owner, EventDelivery.Synchronous>
            let queue: DispatchQueue?

            @discardableResult
            func next(_ handler: @escaping @Sendable (Owner, E) -> Void) -> EventToken {
                if let queue { return maker.atQueue(queue).next(handler) }
                return maker.next(handler)
            }
        }

        func record(_ entry: String) { log.append(entry) }

        func close() {
            if mode == .queued { _ = settledLog() }
            busBox.withLock { $0 = nil }
        }

        /// Dispatches from the test; in queued mode the queue starts only once `dispatch` returned,
        /// and this returns once the queue has run everything that followed from the event.
        func dispatch<E: Event>(_ event: E) {
            guard mode == .queued else { return bus.dispatch(event) }
            let gate = DispatchSemaphore(value: 0)
            queue.async { _ = gate.wait(timeout: .now() + defaultTimeout) }
            bus.dispatch(event)
            gate.signal()
            _ = settledLog()
        }

        /// The log once nothing more is running: in queued mode, drains until a drain runs nothing.
        func settledLog() -> [String] {
            if mode == .queued {
                var before = -1
                while before != log.value.count {
                    before = log.value.count
                    #expect(drain(queue))
                }
            }
            return log.value
        }
    }

    /// A token slot a handler can read before the token exists.
    final class Slot: Sendable {
        let token = Shared<EventToken?>(nil)
        func dispose() { token.value?.dispose() }
    }

    @Test(
        "Dispatching the same type from a handler is depth-first (sync) or queued behind (atQueue)",
        arguments: Mode.allCases)
    func dispatchSameType(mode: Mode) {
        let h = Harness(mode)
        defer { h.close() }
        h.on(Tick.self).next { event in
            h.record("A\(event.n)")
            if event.n == 0 { h.bus.dispatch(Tick(n: 1)) }
        }
        h.on(Tick.self).next { h.record("B\($0.n)") }
        h.dispatch(Tick(n: 0))
        #expect(h.settledLog() == (mode == .sync ? ["A0", "A1", "B1", "B0"] : ["A0", "B0", "A1", "B1"]))
    }

    @Test("Dispatching another type from a handler", arguments: Mode.allCases)
    func dispatchOtherType(mode: Mode) {
        let h = Harness(mode)
        defer { h.close() }
        h.on(Tick.self).next { event in
            h.record("A\(event.n)")
            h.bus.dispatch(Other())
        }
        h.on(Tick.self).next { h.record("B\($0.n)") }
        h.on(Other.self).next { _ in h.record("C:other") }
        h.dispatch(Tick(n: 0))
        #expect(h.settledLog() == (mode == .sync ? ["A0", "C:other", "B0"] : ["A0", "B0", "C:other"]))
    }

    @Test("A subscriber made in a handler does not get the current event, and gets the next", arguments: Mode.allCases)
    func subscribeFromHandler(mode: Mode) {
        let h = Harness(mode)
        defer { h.close() }
        h.on(Tick.self).next { event in
            h.record("A\(event.n)")
            if event.n == 0 { h.on(Tick.self).next { h.record("D\($0.n)") } }
        }
        h.on(Tick.self).next { h.record("B\($0.n)") }
        h.dispatch(Tick(n: 0))
        h.dispatch(Tick(n: 1))
        #expect(h.settledLog() == ["A0", "B0", "A1", "B1", "D1"])
        #expect(h.bus.subscriptionCount == 3)
    }

    @Test(
        "A handler disposing its own subscription is not called again; later ones still get the event",
        arguments: Mode.allCases)
    func disposeSelf(mode: Mode) {
        let h = Harness(mode)
        defer { h.close() }
        let a = Slot()
        a.token.withLock {
            $0 = h.on(Tick.self).next { event in
                h.record("A\(event.n)")
                a.dispose()
            }
        }
        h.on(Tick.self).next { h.record("B\($0.n)") }
        h.dispatch(Tick(n: 0))
        h.dispatch(Tick(n: 1))
        #expect(h.settledLog() == ["A0", "B0", "B1"])
        #expect(h.bus.subscriptionCount == 1)
    }

    @Test("Disposing an earlier subscriber from a handler stops it from the next event on", arguments: Mode.allCases)
    func disposeEarlier(mode: Mode) {
        let h = Harness(mode)
        defer { h.close() }
        let a = h.on(Tick.self).next { h.record("A\($0.n)") }
        h.on(Tick.self).next { event in
            h.record("B\(event.n)")
            a.dispose()
        }
        h.dispatch(Tick(n: 0))
        h.dispatch(Tick(n: 1))
        #expect(h.settledLog() == ["A0", "B0", "B1"])
    }

    @Test(
        "Disposing a later subscriber from a handler: it is not called, even for the current event",
        arguments: Mode.allCases)
    func disposeLater(mode: Mode) {
        let h = Harness(mode)
        defer { h.close() }
        let b = Slot()
        h.on(Tick.self).next { event in
            h.record("A\(event.n)")
            b.dispose()
        }
        b.token.withLock { $0 = h.on(Tick.self).next { h.record("B\($0.n)") } }
        h.on(Tick.self).next { h.record("C\($0.n)") }
        h.dispatch(Tick(n: 0))
        h.dispatch(Tick(n: 1))
        #expect(h.settledLog() == ["A0", "C0", "A1", "C1"])
    }

    @Test("Disposing every subscription (a bag) from a handler ends the fan-out", arguments: Mode.allCases)
    func disposeAll(mode: Mode) {
        let h = Harness(mode)
        defer { h.close() }
        let bag = DisposeBag()
        h.on(Tick.self).next { event in
            h.record("A\(event.n)")
            bag.dispose()
        }.disposed(by: bag)
        h.on(Tick.self).next { h.record("B\($0.n)") }.disposed(by: bag)
        h.on(Tick.self).ofType("never").next { h.record("K\($0.n)") }.disposed(by: bag)
        h.on(Tick.self).next { h.record("C\($0.n)") }.disposed(by: bag)
        h.dispatch(Tick(n: 0))
        h.dispatch(Tick(n: 1))
        #expect(h.settledLog() == ["A0"])
        #expect(h.bus.subscriptionCount == 0)
    }

    final class Owner: Sendable {
        let log: Shared<[String]>
        init(log: Shared<[String]>) { self.log = log }
        deinit { log.append("owner deinit") }
    }

    @Test(
        "Releasing the owner from its handler: the call completes, later subscribers of that owner are skipped",
        arguments: Mode.allCases)
    func releaseOwner(mode: Mode) {
        let h = Harness(mode)
        defer { h.close() }
        let holder = Shared<Owner?>(Owner(log: h.log))
        weak let weakOwner = holder.value
        h.on(Tick.self).freeWith(holder.value).next { owner, event in
            holder.withLock { $0 = nil }  // the last strong reference outside the bus's call
            h.record("A\(event.n) owner alive: \(owner.log === h.log)")
        }
        h.on(Tick.self).freeWith(holder.value).next { _, event in h.record("B\(event.n)") }
        h.on(Tick.self).next { h.record("C\($0.n)") }
        h.dispatch(Tick(n: 0))
        h.dispatch(Tick(n: 1))
        #expect(h.settledLog() == ["A0 owner alive: true", "owner deinit", "C0", "C1"])
        #expect(weakOwner == nil)
        h.bus.purge()
        #expect(h.bus.subscriptionCount == 1)
    }

    @Test(
        "A captured object whose deinit dispatches, released after the handler disposed itself",
        arguments: Mode.allCases)
    func captureDeinitDispatches(mode: Mode) {
        let h = Harness(mode)
        defer { h.close() }
        let a = Slot()
        a.token.withLock { slot in
            let capture = DeinitAction { [weak bus = h.bus] in
                h.record("capture deinit")
                bus?.dispatch(Other())
            }
            slot = h.on(Tick.self).next { event in
                withExtendedLifetime(capture) { h.record("A\(event.n)") }
                a.dispose()
            }
        }
        h.on(Tick.self).next { h.record("B\($0.n)") }
        h.on(Other.self).next { _ in h.record("C:other") }
        h.dispatch(Tick(n: 0))
        h.record("dispatch returned")
        h.dispatch(Tick(n: 1))
        // sync: the closure's last reference is the dispatch's snapshot, dropped after the fan-out,
        // before `dispatch` returns; queued: it is the queued delivery, dropped when A's block ends.
        #expect(
            h.settledLog()
                == (mode == .sync
                    ? ["A0", "B0", "capture deinit", "C:other", "dispatch returned", "B1"]
                    : ["A0", "capture deinit", "B0", "C:other", "dispatch returned", "B1"]))
    }

    @Test("A captured object whose deinit disposes another subscription", arguments: Mode.allCases)
    func captureDeinitDisposes(mode: Mode) {
        let h = Harness(mode)
        defer { h.close() }
        let a = Slot()
        let c = Slot()
        a.token.withLock { slot in
            let capture = DeinitAction {
                h.record("capture deinit")
                c.dispose()
            }
            slot = h.on(Tick.self).next { event in
                withExtendedLifetime(capture) { h.record("A\(event.n)") }
                a.dispose()
            }
        }
        h.on(Tick.self).next { h.record("B\($0.n)") }
        c.token.withLock { $0 = h.on(Tick.self).next { h.record("C\($0.n)") } }
        h.dispatch(Tick(n: 0))
        h.dispatch(Tick(n: 1))
        #expect(
            h.settledLog()
                == (mode == .sync
                    ? ["A0", "B0", "C0", "capture deinit", "B1"]
                    : ["A0", "capture deinit", "B0", "B1"]))
        #expect(h.bus.subscriptionCount == 1)
    }

    @Test("Recursion depth 1,000: a handler dispatching the next event from inside itself", arguments: Mode.allCases)
    func recursionDepth1000(mode: Mode) {
        let depth = 1_000
        let h = Harness(mode)
        defer { h.close() }
        h.on(Tick.self).next { event in
            h.record("A\(event.n)")
            if event.n < depth { h.bus.dispatch(Tick(n: event.n + 1)) }
        }
        h.on(Tick.self).next { h.record("B\($0.n)") }
        // 1,000 nested dispatches fit an 8 MiB stack (Linux's default) in a debug build (about
        // 4.5 KiB each, see "Guarantees"); a sanitizer makes every frame several times larger.
        let finished = onThread(stackSize: underStackHungrySanitizer ? 96 << 20 : 8 << 20, timeout: .seconds(120)) {
            h.dispatch(Tick(n: 0))
        }
        #expect(finished)
        let expected =
            mode == .sync
            ? (0...depth).map { "A\($0)" } + (0...depth).reversed().map { "B\($0)" }
            : (0...depth).flatMap { ["A\($0)", "B\($0)"] }
        let log = h.settledLog()
        #expect(log == expected)
        print("reentrancy(\(mode.rawValue)): depth \(depth), \(log.count) deliveries in the expected order")
    }
}
