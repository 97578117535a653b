import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

/// Battery item 3: no user code runs under the bus lock. For every path that runs user code, the
/// user code asks another thread (a `BusCallProbe`) to call into the same bus and waits for it with
/// a timeout; if the bus held its lock around the user code, the probe would block on it and the
/// wait would time out, failing the test instead of hanging it.
@Suite("Reliability: no user code under the bus lock")
struct NoUserCodeUnderLockTests {
    struct Ping: Event {
        var key: String? = nil
        var eventType: String? { key }
    }
    struct Unrelated: Event {}

    /// Every way the bus runs user code.
    enum Path: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case handler, queuedHandler, ownerPassingHandler, keyedHandler
        case handlerWhileItsTokenIsDisposedElsewhere
        case ownerDeinitAfterItsHandler
        case closureReleaseOnDispose, closureReleaseOnDisposeFromItsHandler, closureReleaseOnBagDeinit
        case closureReleaseOnOwnerDeathAtDispatch, closureReleaseOnPurge, closureReleaseOnSweep
        case closureReleaseOnBusDeinit
        var testDescription: String { rawValue }
    }

    @Test("User code can wait on a thread that is calling into the bus", arguments: Path.allCases)
    func userCodeIsNotUnderTheLock(path: Path) {
        let bus = EventBus()
        let probe = BusCallProbe()
        let outcomes = Shared<[Bool]>([])
        // Handlers hold the bus weakly, or they would keep it (and themselves) alive.
        weak let weakBus = bus
        /// The user code: wait (bounded) for another thread's bus calls.
        @Sendable func userCode(on target: EventBus? = nil) {
            guard let target = target ?? weakBus else { return }
            let completed = probe.completes { BusCallProbe.touch(target) }
            outcomes.withLock { $0.append(completed) }
        }
        func capture() -> DeinitAction { DeinitAction { userCode() } }

        switch path {
        case .handler:
            _ = bus.on(Ping.self).next { _ in userCode() }
            bus.dispatch(Ping())
            #expect(onAnotherThread { bus.dispatch(Ping()) })
        case .queuedHandler:
            let queue = DispatchQueue(label: "probe.queued")
            _ = bus.on(Ping.self).atQueue(queue).next { _ in userCode() }
            bus.dispatch(Ping())
            #expect(drain(queue))
        case .ownerPassingHandler:
            let owner = Sentinel()
            bus.on(Ping.self).freeWith(owner).next { _, _ in userCode() }
            bus.dispatch(Ping())
            withExtendedLifetime(owner) {}
        case .keyedHandler:
            _ = bus.on(Ping.self).ofType("k").next { _ in userCode() }
            bus.dispatch(Ping(key: "k"))
        case .handlerWhileItsTokenIsDisposedElsewhere:
            // The probe disposes the running handler's own token: dispose() must not wait for it.
            let slot = Shared<EventToken?>(nil)
            slot.withLock {
                $0 = bus.on(Ping.self).next { _ in
                    let completed = probe.completes { slot.value?.dispose() }
                    outcomes.withLock { $0.append(completed) }
                }
            }
            bus.dispatch(Ping())
            #expect(slot.value?.isDisposed == true)
        case .ownerDeinitAfterItsHandler:
            // Another thread drops the owner while its handler runs: the owner's deinit runs on the
            // dispatching thread when the bus lets go of it, after the handler.
            final class Owner: Sendable {
                let onDeinit: @Sendable () -> Void
                init(_ onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
                deinit { onDeinit() }
            }
            let holder = Shared<Owner?>(Owner { userCode() })
            bus.on(Ping.self).freeWith(holder.value).next { _, _ in
                _ = probe.completes { holder.withLock { $0 = nil } }
            }
            bus.dispatch(Ping())
        case .closureReleaseOnDispose:
            let token = {
                let c = capture()
                return bus.on(Ping.self).next { _ in withExtendedLifetime(c) {} }
            }()
            token.dispose()
        case .closureReleaseOnDisposeFromItsHandler:
            let slot = Shared<EventToken?>(nil)
            slot.withLock { token in
                let c = capture()
                token = bus.on(Ping.self).next { _ in
                    withExtendedLifetime(c) {}
                    slot.value?.dispose()
                }
            }
            bus.dispatch(Ping())
            slot.withLock { $0 = nil }
        case .closureReleaseOnBagDeinit:
            var bag: DisposeBag? = DisposeBag()
            do {
                let c = capture()
                bus.on(Ping.self).next { _ in withExtendedLifetime(c) {} }.disposed(by: bag!)
            }
            bag = nil
        case .closureReleaseOnOwnerDeathAtDispatch:
            var owner: Sentinel? = Sentinel()
            do {
                let c = capture()
                bus.on(Ping.self).freeWith(owner).next { _, _ in withExtendedLifetime(c) {} }
            }
            owner = nil
            bus.dispatch(Ping())
        case .closureReleaseOnPurge:
            var owner: Sentinel? = Sentinel()
            do {
                let c = capture()
                bus.on(Ping.self).freeWith(owner).next { _, _ in withExtendedLifetime(c) {} }
            }
            owner = nil
            bus.purge()
        case .closureReleaseOnSweep:
            // A keyed subscription whose key is never dispatched: only the amortised sweep finds it.
            var owner: Sentinel? = Sentinel()
            do {
                let c = capture()
                bus.on(Ping.self).ofType("quiet").freeWith(owner).next { _, _ in withExtendedLifetime(c) {} }
            }
            owner = nil
            var operations = 0
            let turn = bus.index.dispatchesPerSweepTurn
            while outcomes.value.isEmpty, operations <= turn {
                bus.dispatch(Unrelated())
                operations += 1
            }
            #expect(operations <= turn, "the sweep did not release the closure within its bound")
        case .closureReleaseOnBusDeinit:
            // The dying bus cannot be called; the released closure's user code uses a second bus.
            let other = EventBus()
            var dying: EventBus? = EventBus()
            do {
                let c = DeinitAction { userCode(on: other) }
                _ = dying!.on(Ping.self).next { _ in withExtendedLifetime(c) {} }
            }
            dying = nil
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
