import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

@Suite("Owner lifetimes (the portable path: no associated objects)", .offThePool)
struct LifetimeTests {
    @Test(
        "After its owner is deallocated a handler is never called, and the subscription is reclaimed at the next dispatch"
    )
    func ownerDeathEndsSubscription() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        var screen: Screen? = Screen("home", log: log)
        let token = screen!.subscribe(Ping.self, on: bus).next { owner, event in
            owner.log.append("\(owner.name) \(event.value)")
        }
        bus.dispatch(Ping(value: 1))
        screen = nil
        bus.dispatch(Ping(value: 2))

        #expect(log.value == ["home 1"])
        #expect(token.isDisposed)
        #expect(bus.subscriptionCount == 0)
    }

    @Test("The owner-passing handler gets the owner retained for the call; no [weak self] needed")
    func ownerPassingHandlerRetainsOwner() {
        let bus = EventBus()
        let log = Shared<[String]>([])
        let owner = Shared<Screen?>(Screen("detail", log: log))
        owner.value!.subscribe(Ping.self, on: bus).next { screen, _ in
            owner.withLock { $0 = nil }  // drop the only other strong reference mid-call
            screen.log.append("still alive: \(screen.name)")
        }
        bus.dispatch(Ping())
        bus.dispatch(Ping())
        #expect(log.value == ["still alive: detail"])
    }

    @Test("A dead owner's handler and captures are released at the next dispatch of its type")
    func releasedAtNextDispatch() {
        let bus = EventBus()
        var owner: Sentinel? = Sentinel()
        let handlerAlive = subscribeCapturingSentinel { handler in
            bus.on(Ping.self).freeWith(owner).next { _, event in handler(event) }
        }
        owner = nil
        #expect(handlerAlive(), "nothing has told the bus yet")
        bus.dispatch(Ping())
        #expect(!handlerAlive())
    }

    @Test(
        "Without a dispatch of its type, a dead owner's handler is released within max(256, subscriptions) other bus operations"
    )
    func releasedBySweep() {
        let bus = EventBus()
        let bystanders = (0..<10).map { _ in bus.on(Pong.self).next { _ in } }
        var owner: Sentinel? = Sentinel()
        let handlerAlive = subscribeCapturingSentinel { handler in
            bus.on(Ping.self).freeWith(owner).next { _, event in handler(event) }
        }
        owner = nil
        var operations = 0
        let turn = bus.core.dispatchesPerSweepTurn
        while handlerAlive() && operations < 1_000 {
            bus.dispatch(Pong())
            operations += 1
        }
        #expect(!handlerAlive())
        #expect(operations <= turn, "released after \(operations) operations")
        print("releasedBySweep: dead owner's handler released after \(operations) unrelated dispatches")
        for bystander in bystanders { bystander.dispose() }
    }

    @Test("purge() releases dead owners' handlers at once")
    func purgeReleasesAtOnce() {
        let bus = EventBus()
        var owner: Sentinel? = Sentinel()
        let handlerAlive = subscribeCapturingSentinel { handler in
            bus.on(Chat.self).ofType("a").ofType("b").freeWith(owner).next { _, event in handler(event) }
        }
        #expect(bus.subscriptionCount == 1)
        owner = nil
        bus.purge()
        #expect(!handlerAlive())
        #expect(bus.subscriptionCount == 0)
    }

    @Test("freeWith an owner that is already gone (or nil) yields an inert, disposed token")
    func freeWithGoneOwner() {
        let bus = EventBus()
        let calls = Shared(0)
        var owner: Sentinel? = Sentinel()
        let maker = bus.on(Ping.self).freeWith(owner)
        owner = nil
        let token = maker.next { _, _ in calls.increment() }
        let nilOwner: Sentinel? = nil
        let other = bus.on(Ping.self).freeWith(nilOwner).next { _, _ in calls.increment() }

        bus.dispatch(Ping())

        #expect(calls.value == 0)
        #expect(token.isDisposed && other.isDisposed)
        #expect(token.id == 0)
        #expect(bus.subscriptionCount == 0)
        token.dispose()
    }

    @Test("A queued delivery whose owner dies before it runs is dropped")
    func queuedDeliveryAfterOwnerDeath() {
        let bus = EventBus()
        let queue = DispatchQueue(label: "blocked")
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }
        let calls = Shared(0)
        var owner: Sentinel? = Sentinel()
        bus.on(Ping.self).atQueue(queue).freeWith(owner).next { _, _ in calls.increment() }
        bus.dispatch(Ping())
        owner = nil
        gate.signal()
        #expect(drain(queue))
        #expect(calls.value == 0)
    }
}

@Suite("DisposeBag", .offThePool)
struct DisposeBagTests {
    @Test("Deallocating a bag disposes its tokens")
    func deinitDisposes() {
        let bus = EventBus()
        let calls = Shared(0)
        var bag: DisposeBag? = DisposeBag()
        let token = bus.on(Ping.self).next { _ in calls.increment() }
        token.disposed(by: bag!)
        bus.on(Pong.self).next { _ in calls.increment() }.disposed(by: bag!)
        bag = nil
        bus.dispatch(Ping())
        bus.dispatch(Pong())
        #expect(calls.value == 0)
        #expect(token.isDisposed)
        #expect(bus.subscriptionCount == 0)
    }

    @Test("dispose() empties the bag, which can be reused")
    func disposeEmpties() {
        let bus = EventBus()
        let bag = DisposeBag()
        bus.on(Ping.self).next { _ in }.disposed(by: bag)
        #expect(bag.count == 1)
        bag.dispose()
        #expect(bag.count == 0)
        #expect(bus.subscriptionCount == 0)
        bus.on(Ping.self).next { _ in }.disposed(by: bag)
        #expect(bag.count == 1)
    }

    @Test(
        "Tokens disposed elsewhere are forgotten: 10,000 subscribe/dispose cycles through one bag keep it at its live tokens"
    )
    func prunesDisposedTokens() {
        let bus = EventBus()
        let bag = DisposeBag()
        let keeper = bus.on(Pong.self).next { _ in }
        keeper.disposed(by: bag)
        var largest = 0
        for _ in 0..<10_000 {
            let token = bus.on(Ping.self).next { _ in }
            token.disposed(by: bag)
            token.dispose()
            largest = max(largest, bag.count)
        }
        #expect(largest <= 2)
        #expect(!keeper.isDisposed, "pruning keeps live tokens")
        print("prunesDisposedTokens: 10000 cycles, bag never held more than \(largest) tokens")
    }

    @Test("A disposed token is not kept, and a token inserted twice is held once")
    func insertEdgeCases() {
        let bus = EventBus()
        let bag = DisposeBag()
        let token = bus.on(Ping.self).next { _ in }
        bag.insert(token)
        bag.insert(token)
        #expect(bag.count == 1)
        let disposed = bus.on(Ping.self).next { _ in }
        disposed.dispose()
        bag.insert(disposed)
        #expect(bag.count == 1)
    }
}
