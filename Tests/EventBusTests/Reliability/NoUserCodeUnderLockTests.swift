import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

/// Battery item 3: no user code runs under the bus lock. For every path that runs user code, the
/// user code asks another thread (a `BusCallProbe`) to call into the same bus and waits for it with
/// a timeout; if the bus held its lock around the user code, the probe would block on it and the
/// wait would time out, failing the test instead of hanging it.
@Suite("Reliability: no user code under the bus lock", .tags(.stress), .offThePool)
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
        // Delivery policies.
        case stoppingHandler, monitorAfterStop, handlerErrorHook, deadEventHook, stickyReplay
        case stickyReleaseOnReplace, stickyReleaseOnExpiry, supertypeConversion, supertypeHandler
        // Introspection and tracing.
        case tracerOnDispatch, tracerOnSubscribeAndEnd, tracerOnOwnerGone
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
            let turn = bus.core.dispatchesPerSweepTurn
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
        case .stoppingHandler:
            _ = bus.on(Ping.self).handle { _ in
                userCode()
                return .stop
            }
            bus.dispatch(Ping())
        case .monitorAfterStop:
            _ = bus.on(Ping.self).handle { _ in .stop }
            _ = bus.on(Ping.self).monitor().next { _ in userCode() }
            bus.dispatch(Ping())
        case .handlerErrorHook:
            struct Failure: Error {}
            bus.handlerErrorHandler = { _ in userCode() }
            _ = bus.on(Ping.self).next { _ throws in throw Failure() }
            bus.dispatch(Ping())
        case .deadEventHook:
            // Only for Ping: the probe's own calls dispatch events nobody receives.
            bus.deadEventHandler = { dead in if dead.event is Ping { userCode() } }
            bus.dispatch(Ping())
        case .stickyReplay:
            bus.dispatch(Ping(), sticky: .latest)
            _ = bus.on(Ping.self).replayingSticky().next { _ in userCode() }
        case .stickyReleaseOnReplace:
            struct Carrier: Event { let action: DeinitAction }
            bus.dispatch(Carrier(action: capture()), sticky: .latest)
            bus.dispatch(Carrier(action: DeinitAction {}), sticky: .latest)
        case .stickyReleaseOnExpiry:
            struct Carrier: Event { let action: DeinitAction }
            let clock = ManualEventClock()
            let timed = EventBus(clock: clock)
            timed.dispatch(Carrier(action: DeinitAction { userCode() }), sticky: .latest(ttl: .seconds(1)))
            clock.advance(by: .seconds(2))
            timed.dispatch(Ping())  // the sweep lets it go
        case .supertypeConversion:
            TracedActivity.onConvert.withLock { $0 = { userCode() } }
            _ = bus.on(anyOf: (any TracedActivityKind).self).next { _ in }
            bus.dispatch(TracedActivity())
            TracedActivity.onConvert.withLock { $0 = nil }
        case .supertypeHandler:
            _ = bus.on(anyOf: (any TracedActivityKind).self).next { _ in userCode() }
            bus.dispatch(TracedActivity())
        case .tracerOnDispatch:
            // Only for Ping: the probe's own calls make records too.
            bus.tracer = { record in
                if case .dispatched(let dispatched) = record, dispatched.typeName.hasSuffix("Ping") { userCode() }
            }
            _ = bus.on(Ping.self).next { _ in }
            bus.dispatch(Ping())
        case .tracerOnSubscribeAndEnd:
            bus.tracer = { record in
                switch record {
                case .subscribed(let info) where info.typeName.hasSuffix("Ping"): userCode()
                case .ended(let ended) where ended.typeName.hasSuffix("Ping"): userCode()
                default: break
                }
            }
            bus.on(Ping.self).next { _ in }.dispose()
        case .tracerOnOwnerGone:
            final class Owner: Sendable {}
            bus.tracer = { record in
                if case .ended(let ended) = record, ended.reason == .ownerGone { userCode() }
            }
            var owner: Owner? = Owner()
            bus.on(Ping.self).freeWith(owner).next { _, _ in }
            owner = nil
            bus.dispatch(Ping())  // finds the owner gone
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

protocol TracedActivityKind: Sendable {}

/// An event whose supertype conversion runs test code (`onConvert`), for the no-lock probe.
struct TracedActivity: Event, TracedActivityKind, DeliveredAsSupertypes {
    static let onConvert = Shared<(@Sendable () -> Void)?>(nil)
    static let supertypes: [Supertype<Self>] = [
        .as((any TracedActivityKind).self) { event in
            onConvert.value?()
            return event
        }
    ]
}

/// The same probe for event chains. The probe thread posts, mounts, unmounts, subscribes
/// and describes the tree on the same nodes, so it needs the tree's lock and every node's lock.
extension NoUserCodeUnderLockTests {
    struct FetchName: Request { typealias Response = String }

    /// Every way a chain runs user code.
    enum ChainPath: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case handler, stoppingHandler, monitorAfterStop, interceptor, answerer, asyncAnswererThrowing
        case providedParent, closureReleaseOnDispose, closureReleaseOnNodeDeinit, nodeDeinitAfterUnmount
        case ownerDeinitAfterItsHandler
        var testDescription: String { rawValue }
    }

    static func touch(_ nodes: [EventNode]) {
        guard let bottom = nodes.first, let top = nodes.last else { return }
        let extra = EventNode(name: "Probe")
        extra.mount(on: bottom)
        extra.post(Unrelated())
        _ = extra.route
        _ = top.treeDescription
        bottom.on(Unrelated.self).next { _ in }.dispose()
        extra.unmount()
        _ = try? extra.request(FetchName())
    }

    /// The synchronous `request` (in an async function, `request` resolves to the async one).
    static func requestSynchronously(from node: EventNode) {
        _ = try? node.request(FetchName())
    }

    @Test("Chains: user code can wait on a thread that is calling into the chain", arguments: ChainPath.allCases)
    func chainUserCodeIsNotUnderTheLock(path: ChainPath) async {
        let root = EventNode(name: "Root")
        let cell = EventNode(name: "Cell")
        cell.mount(on: root)
        let probe = BusCallProbe()
        let outcomes = Shared<[Bool]>([])
        weak let weakRoot = root
        weak let weakCell = cell
        @Sendable func userCode() {
            let nodes = [weakCell, weakRoot].compactMap { $0 }
            let completed = probe.completes { NoUserCodeUnderLockTests.touch(nodes) }
            outcomes.withLock { $0.append(completed) }
        }
        switch path {
        case .handler:
            _ = root.on(Ping.self).next { _ in userCode() }
            cell.post(Ping())
        case .stoppingHandler:
            _ = cell.on(Ping.self).handle { _ in
                userCode()
                return .stop
            }
            cell.post(Ping())
        case .monitorAfterStop:
            _ = cell.on(Ping.self).handle { _ in .stop }
            _ = root.on(Ping.self).monitor().next { _ in userCode() }
            cell.post(Ping())
        case .interceptor:
            _ = root.intercept(Ping.self) { event in
                userCode()
                return .drop
            }
            cell.post(Ping())
        case .answerer:
            _ = root.answer(FetchName.self) { _ in
                userCode()
                return .answer("root")
            }
            Self.requestSynchronously(from: cell)
        case .asyncAnswererThrowing:
            _ = root.answer(FetchName.self) { _ async throws in
                userCode()
                throw CancellationError()
            }
            _ = try? await cell.request(FetchName())
        case .providedParent:
            let child = EventNode(name: "Provided") {
                userCode()
                return weakCell
            }
            child.post(Ping())
        case .closureReleaseOnDispose:
            let action = DeinitAction { userCode() }
            let token = root.on(Ping.self).next { _ in withExtendedLifetime(action) {} }
            token.dispose()
        case .closureReleaseOnNodeDeinit:
            var node: EventNode? = EventNode(name: "Doomed")
            node!.mount(on: cell)
            let action = DeinitAction { userCode() }
            _ = node!.on(Ping.self).next { _ in withExtendedLifetime(action) {} }
            node = nil
        case .nodeDeinitAfterUnmount:
            // The last reference to a mounted parent is dropped while a post holds its route.
            let action = DeinitAction { userCode() }
            var parent: EventNode? = EventNode(name: "Parent")
            let child = EventNode(name: "Child")
            child.mount(on: parent!)
            _ = parent!.on(Ping.self).next { _ in withExtendedLifetime(action) {} }
            let parentBox = Shared<EventNode?>(parent)
            parent = nil
            _ = child.on(Ping.self).next { _ in parentBox.withLock { $0 = nil } }
            child.post(Ping())  // the route's reference is the last: released after delivery
        case .ownerDeinitAfterItsHandler:
            let owner = Shared<DeinitAction?>(DeinitAction { userCode() })
            root.on(Ping.self).freeWith(owner.value).next { _, _ in owner.withLock { $0 = nil } }
            cell.post(Ping())
        }
        let results = outcomes.value
        #expect(!results.isEmpty, "the user code did not run")
        #expect(
            results.allSatisfy { $0 }, "user code waited on a chain call that could not complete: a lock was held")
        print(
            "no-lock probe chain \(path.rawValue): user code ran \(results.count)×, every chain call completed: \(results.allSatisfy { $0 })"
        )
    }
}
