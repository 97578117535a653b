import Dispatch
import Testing

@testable import EventBus

/// Replacing the bus's tracer or handlers releases the old closure with no lock held: its captured
/// values' `deinit` may call the bus ("Guarantees": no lock held during user code). The bus's own
/// deinit already does so (`removeAll` boxes them); a setter must too. So must the registry when it
/// lets go of the oldest of the handler errors it keeps (a thrown error is a user value).
@Suite(
    "Lifetimes: a replaced tracer or handler, or a handler error let go of, is released with no lock held", .offThePool)
struct ReplacedClosureReleaseTests {
    /// Captured by a closure given to the bus. Its deinit asks a thread of its own to take the
    /// bus's lock and waits for it (`defaultTimeout`): if the lock is held (by the thread running
    /// this deinit), that wait times out. A thread of its own, not the global queue, whose threads
    /// the suite's other tests may keep busy for longer than a short wait on a loaded machine.
    /// (Calling the bus from this thread instead would trap on the re-entrant lock in a debug
    /// build.)
    final class LockProbe: @unchecked Sendable {
        // @unchecked Sendable: `bus` is only read; `lockWasHeld` is a `Shared`.
        weak var bus: EventBus?
        let lockWasHeld: Shared<Bool?>

        init(bus: EventBus, lockWasHeld: Shared<Bool?>) {
            self.bus = bus
            self.lockWasHeld = lockWasHeld
        }

        deinit {
            guard let bus else { return }
            let tookLock = onThread(stackSize: 512 << 10) {
                _ = bus.subscriptionCount  // takes the bus's lock
            }
            lockWasHeld.withLock { $0 = !tookLock }
        }
    }

    @Test("setting the tracer to nil")
    func tracer() {
        let bus = EventBus()
        let lockWasHeld = Shared<Bool?>(nil)
        // The closure holds the only reference to the probe.
        bus.tracer = { [probe = LockProbe(bus: bus, lockWasHeld: lockWasHeld)] _ in withExtendedLifetime(probe) {} }
        bus.tracer = nil
        #expect(lockWasHeld.value == false, "the old tracer was released under the bus's lock")
    }

    @Test("setting the dead-event handler to nil")
    func deadEventHandler() {
        let bus = EventBus()
        let lockWasHeld = Shared<Bool?>(nil)
        // The closure holds the only reference to the probe.
        bus.deadEventHandler = { [probe = LockProbe(bus: bus, lockWasHeld: lockWasHeld)] _ in
            withExtendedLifetime(probe) {}
        }
        bus.deadEventHandler = nil
        #expect(lockWasHeld.value == false, "the old dead-event handler was released under the bus's lock")
    }

    @Test("setting the handler-error handler to nil")
    func handlerErrorHandler() {
        let bus = EventBus()
        let lockWasHeld = Shared<Bool?>(nil)
        // The closure holds the only reference to the probe.
        bus.handlerErrorHandler = { [probe = LockProbe(bus: bus, lockWasHeld: lockWasHeld)] _ in
            withExtendedLifetime(probe) {}
        }
        bus.handlerErrorHandler = nil
        #expect(lockWasHeld.value == false, "the old handler-error handler was released under the bus's lock")
    }

    /// An error whose only reference, once reported, is the bus's list of recent handler errors.
    final class ProbeError: Error, @unchecked Sendable {
        // @unchecked Sendable: immutable.
        let probe: LockProbe
        init(_ probe: LockProbe) { self.probe = probe }
    }

    @Test("the oldest kept handler error, let go of when the list is full")
    func oldestHandlerError() {
        let bus = EventBus()
        bus.handlerErrorHandler = { _ in }
        let lockWasHeld = Shared<Bool?>(nil)
        let thrown = Shared(0)
        let token = bus.on(TracerRemovalTests.Login.self).next { _ throws in
            let first = thrown.withLock { count in
                count += 1
                return count == 1
            }
            if first { throw ProbeError(LockProbe(bus: bus, lockWasHeld: lockWasHeld)) }
            throw CancellationError()
        }
        for _ in 0...Registry.recentHandlerErrorsLimit { bus.dispatch(TracerRemovalTests.Login(userID: "x")) }
        token.dispose()
        #expect(lockWasHeld.value == false, "the evicted handler error was released under the bus's lock")
    }
}
