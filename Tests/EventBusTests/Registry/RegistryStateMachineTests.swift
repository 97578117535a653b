import Dispatch
import Testing

@testable import EventBus

/// The registry as a state machine, driven directly: each operation's result and what it leaves to
/// do after unlocking (``AfterUnlock``) are checked without a lock, a thread or a bus around it, the
/// way swift-nio tests its state machines. (`RegistryModelTests` drives it with random sequences.)
@Suite("Registry: each operation returns what to do after unlocking", .offThePool)
struct RegistryStateMachineTests {
    struct Alpha: Event {}
    struct Beta: Event {}
    final class Owner: Sendable {}

    /// A registry with a bus that supplies nodes and buckets (its own registry stays empty), and a
    /// count of the handler calls. Emptied when let go of, as a bus's deinit empties its own (its
    /// lists' references to their nodes are counted by hand: a registry dropped with nodes linked
    /// leaks them, which LeakSanitizer reports).
    final class Machine {
        var registry: Registry
        let bus = EventBus()
        let calls = Shared(0)

        init(clock: StickyClock = .system) {
            registry = Registry(clock: clock)
        }

        deinit {
            registry.removeAll()
            settle()
        }

        /// Makes a subscription's nodes as the bus does before locking, and subscribes them.
        func subscribe<E: Event>(_: E.Type, keys: [String] = [], owner: Owner? = nil) -> SubscriptionHandle? {
            var traits = SubscriptionTraits()
            traits.isOwned = owner != nil
            let calls = calls
            let body = Body<E>.immediate(.event { _ in calls.increment() })
            let primary = bus.core.makeNodes(
                keys: SubscriptionKeys(keys), body: body, traits: traits, owner: owner,
                callSite: CallSite(fileID: #fileID, line: #line))
            return registry.subscribe(primary, of: E.self, traits: traits, bus: bus)
        }

        /// Takes out what the operations so far left to do, as the executor does before unlocking.
        func takeAfterUnlock() -> AfterUnlock { registry.takeAfterUnlock() }

        /// Performs it, as the executor does after unlocking.
        func settle() {
            var after = registry.takeAfterUnlock()
            bus.core.perform(&after)
        }

        /// Begins a dispatch of `event` and, if its route is to subscribers, steps it to its end as
        /// the core's loop does: deliver the chunk, advance the registry, until it is done.
        func dispatch<E: Event>(
            _ event: E, _ request: DispatchRequest
        ) -> (start: Registry.DispatchStart, found: Bool) {
            withUnsafeTemporaryAllocation(
                of: Unmanaged<SubscriptionNode>.self, capacity: Dispatch.chunkCapacity
            ) { chunk in
                var dispatch = Dispatch(request, chunk: chunk)
                return withUnsafePointer(to: event) { event in
                    let start = registry.beginDispatch(event, key: nil, request, ticks: 1, &dispatch)
                    let found = dispatch.count > 0
                    settle()
                    if case .subscribers = start.route {
                        while dispatch.count > 0 || dispatch.phase != .done {
                            _ = dispatch.deliverChunk(event)
                            if dispatch.isRetained {
                                dispatch.endChunk()
                                break
                            }
                            registry.advanceDispatch(&dispatch, key: nil, subjects: nil)
                            settle()
                        }
                    }
                    if start.held != 0 {
                        registry.endHolding(
                            StickyHold(
                                typeID: ObjectIdentifier(E.self), key: nil, sequence: start.held, container: bus.core),
                            received: dispatch.reached > 0, enqueued: 0)
                    }
                    return (start, found)
                }
            }
        }
    }

    @Test("Subscribe returns a handle, and a record for the tracer if one is set")
    func subscribeReturnsHandleAndTrace() {
        let machine = Machine()
        let first = machine.subscribe(Alpha.self)
        #expect(first != nil)
        #expect(machine.takeAfterUnlock().traced.isEmpty)
        _ = machine.registry.replaceTracer(with: { _ in })
        let second = machine.subscribe(Alpha.self)
        let after = machine.takeAfterUnlock()
        #expect(after.traced.map(\.id) == [second!.id])
        #expect(after.traced.first?.ended == nil)
        #expect(machine.registry.subscriptionCount == 2)
        _ = machine.registry.replaceTracer(with: nil)
        var rest = after
        machine.bus.core.perform(&rest)
    }

    @Test("End returns whether it ended the subscription, and leaves its node to release and its bag to tell")
    func endLeavesNodeAndBag() {
        let machine = Machine()
        let handle = machine.subscribe(Alpha.self, keys: ["a", "b"])!
        machine.settle()
        let bag = BagTokens()
        let attached = machine.registry.attach(handle, to: bag)
        #expect(attached)
        let ended = machine.registry.end(handle, reason: .disposed)
        #expect(ended)
        var after = machine.takeAfterUnlock()
        #expect(after.releaseCount == 2)  // the lists' references to its two nodes
        #expect(after.bagCount == 1)
        machine.bus.core.perform(&after)
        let endedAgain = machine.registry.end(handle, reason: .disposed)
        #expect(!endedAgain)  // already ended: nothing to do
        let none = machine.takeAfterUnlock()
        #expect(none.releaseCount == 0 && none.bagCount == 0)
        #expect(!machine.registry.isLive(handle))
    }

    @Test("End with a tracer set records the end's reason")
    func endTracesReason() {
        let machine = Machine()
        let handle = machine.subscribe(Alpha.self)!
        machine.settle()
        _ = machine.registry.replaceTracer(with: { _ in })
        machine.registry.end(handle, reason: .ownerGone)
        var after = machine.takeAfterUnlock()
        #expect(after.traced.map(\.ended) == [.ownerGone])
        machine.bus.core.perform(&after)
    }

    @Test("The sweep step picks owned subscriptions, each once per turn")
    func sweepStepPicksEachOwnedOnce() {
        let machine = Machine()
        let owners = (0..<5).map { _ in Owner() }
        var ids: Set<UInt64> = []
        for owner in owners { ids.insert(machine.subscribe(Alpha.self, owner: owner)!.id) }
        machine.settle()
        var picked: [UInt64] = []
        // A subscribe pays for two checks (16 eighths): three steps pick all five and one more.
        for _ in 0..<3 {
            machine.registry.tick(.subscribe)
            var after = machine.takeAfterUnlock()
            #expect(after.pickedIDs.count == 2)
            picked += after.pickedIDs
            machine.bus.core.perform(&after)  // owners alive: nothing reclaimed
        }
        #expect(Set(picked.prefix(5)) == ids)
        #expect(machine.registry.subscriptionCount == 5)
        withExtendedLifetime(owners) {}
    }

    @Test("The sweep step picks a lone owned subscription once, its owner gone (checked after unlocking)")
    func sweepPicksLoneOwnedOnce() {
        let machine = Machine()
        var owner: Owner? = Owner()
        let handle = machine.subscribe(Alpha.self, owner: owner)!
        machine.settle()
        owner = nil
        machine.registry.tick(.subscribe)
        var after = machine.takeAfterUnlock()
        #expect(after.pickedIDs == [handle.id])  // once: a ring of one is not picked twice
        // Performing it checks the owner and reclaims through the bus's own core, not this
        // registry (end to end: `LifetimeTests.releasedBySweep`); what the registry decided is under test here.
        machine.bus.core.perform(&after)
    }

    @Test("Begin a dispatch: nowhere with no subscriber, a dead event reported if a handler is set")
    func dispatchWithNobody() {
        let machine = Machine()
        var (start, found) = machine.dispatch(Alpha(), DispatchRequest(bus: machine.bus))
        guard case .nothing = start.route else {
            Issue.record("route \(start.route)")
            return
        }
        #expect(!found && start.reports == 0)
        _ = machine.registry.replaceDeadEventHandler(with: { _ in })
        (start, found) = machine.dispatch(Alpha(), DispatchRequest(bus: machine.bus))
        #expect(start.reports & 1 == 1)
        _ = machine.registry.replaceDeadEventHandler(with: nil)
    }

    @Test("Begin a dispatch: the plan holds the subscribers, delivered to after unlocking")
    func dispatchDelivers() {
        let machine = Machine()
        _ = machine.subscribe(Alpha.self)
        _ = machine.subscribe(Alpha.self)
        _ = machine.subscribe(Beta.self)
        machine.settle()
        let (start, found) = machine.dispatch(Alpha(), DispatchRequest(bus: machine.bus))
        guard case .subscribers = start.route else {
            Issue.record("route \(start.route)")
            return
        }
        #expect(found)
        #expect(machine.calls.value == 2)
    }

    @Test(
        "A sticky dispatch nobody receives keeps the event, readable at once; an untilDelivered one received is held, then let go of"
    )
    func stickyDispatch() {
        let machine = Machine()
        let latest = DispatchRequest(bus: machine.bus, sticky: StickyDispatch(.latest, for: Alpha.self))
        var (start, _) = machine.dispatch(Alpha(), latest)
        #expect(start.held == 0)
        let kept = machine.registry.latestSticky(of: Alpha.self, key: nil)
        #expect(kept != nil)
        let taken = machine.registry.takeSticky(of: Alpha.self, key: nil)
        #expect(taken != nil)
        let keptAfterTake = machine.registry.latestSticky(of: Alpha.self, key: nil)
        #expect(keptAfterTake == nil)
        machine.settle()

        let once = DispatchRequest(bus: machine.bus, sticky: StickyDispatch(.untilDelivered, for: Alpha.self))
        (start, _) = machine.dispatch(Alpha(), once)
        #expect(start.held == 0)  // nobody to receive it: kept, not held
        let keptCount = machine.registry.stickyEvents(of: Alpha.self, key: nil).count
        #expect(keptCount == 1)
        let removed = machine.registry.removeSticky(of: Alpha.self, key: nil)
        #expect(removed == 1)
        machine.settle()

        _ = machine.subscribe(Alpha.self)
        (start, _) = machine.dispatch(Alpha(), once)
        #expect(start.held != 0)  // held by the dispatch, then let go of (received)
        #expect(machine.registry.stickyCount == 0)
        var after = machine.takeAfterUnlock()
        #expect(after.releaseCount == 1)  // the received event
        machine.bus.core.perform(&after)
    }

    @Test("The sweep step lets go of expired sticky events, a bounded number per operation")
    func sweepStepExpires() {
        let clock = ManualEventClock()
        let machine = Machine(clock: .manual(clock))
        let ttl = DispatchRequest(
            bus: machine.bus, sticky: StickyDispatch(.latest(ttl: .seconds(1)), for: Alpha.self))
        _ = machine.dispatch(Alpha(), ttl)
        let ttlBeta = DispatchRequest(
            bus: machine.bus, sticky: StickyDispatch(.latest(ttl: .seconds(1)), for: Beta.self))
        _ = machine.dispatch(Beta(), ttlBeta)
        machine.settle()
        #expect(machine.registry.stickyCount == 2)
        clock.advance(by: .seconds(2))
        machine.registry.tick(.dispose)
        var after = machine.takeAfterUnlock()
        #expect(after.releaseCount == Registry.expiriesPerOperation)
        #expect(machine.registry.stickyCount == 0)
        machine.bus.core.perform(&after)
    }

    @Test("Removing everything ends every subscription, tells the bags, and records each end for the tracer")
    func removeAll() {
        let machine = Machine()
        let handles = (0..<3).compactMap { _ in machine.subscribe(Alpha.self, keys: ["k"]) }
        machine.settle()
        let bag = BagTokens()
        let attached = machine.registry.attach(handles[0], to: bag)
        #expect(attached)
        let records = Shared(0)
        _ = machine.registry.replaceTracer(with: { _ in records.increment() })
        machine.registry.removeAll()
        #expect(machine.registry.tracer == nil)
        var after = machine.takeAfterUnlock()
        #expect(after.traced.count == 3)
        #expect(Set(after.traced.map(\.ended)) == [.busGone])
        #expect(after.bagCount == 1)
        #expect(machine.registry.subscriptionCount == 0)
        machine.bus.core.perform(&after)
        #expect(records.value == 3)
        #expect(handles.allSatisfy { !machine.registry.isLive($0) })
    }
}
