import Dispatch
import Testing

@testable import EventBus  // test helpers only (Shared, Thread, AsyncWait); the bus is used through its public API

#if canImport(Darwin)
    import Darwin
#endif

/// Owners of main-actor and `atQueue(.main)` subscriptions (view controllers,
/// view models) must only ever be deallocated on the main queue, whatever other threads do to the
/// bus meanwhile (DESIGN §5: "Owners of main-actor and `atQueue(.main)` subscriptions are only ever
/// released on the main queue").
///
/// The failure this guards against: a sweep (periodic, or `purge()`) on a background thread reads
/// each owner through its weak reference, so it holds a strong reference for a moment; if the main
/// actor drops its last reference during that moment, the owner's `deinit` runs on the background
/// thread, where a `@MainActor` class's `deinit` must never run.
///
/// "On the main queue" is decided here without the library's internals: a block of the main queue
/// carries this file's own queue-specific value (on Linux under `swift test` the main queue is
/// drained by a pool thread, not the process's main thread: see `MainQueue` in ConcurrencySupport).
@Suite("Lifetimes: main-actor owners are deallocated on the main queue", .tags(.stress), .offThePool)
struct MainThreadReleaseTests {
    /// What the background thread dispatches: nothing subscribes to it.
    struct Unrelated: Event {}
    /// What the owners subscribe to; never dispatched here.
    struct Shown: Event {}

    /// Counts the owners' deinits, and those that ran off the main queue.
    final class Record: Sendable {
        let deinits = Shared(0)
        let offMainQueue = Shared(0)
    }

    /// A view-controller-like owner: main-actor state, and a deinit that reports where it ran.
    @MainActor
    final class ViewController {
        let record: Record
        var shown = 0

        init(record: Record) { self.record = record }

        deinit {
            if !Self.isOnMainQueue { record.offMainQueue.increment() }
            record.deinits.increment()
        }

        /// Whether the caller runs on the main queue (or, on Apple platforms, the main thread).
        nonisolated static var isOnMainQueue: Bool {
            #if canImport(Darwin)
                if pthread_main_np() != 0 { return true }
            #endif
            _ = markMainQueue
            return DispatchQueue.getSpecific(key: mainQueueKey) != nil
        }
    }

    /// The main actor's strong references to the owners, kept across suspensions.
    @MainActor
    final class Screens {
        var controllers: [ViewController] = []
    }

    /// How the owners subscribe.
    enum Binding: String, CaseIterable, Sendable {
        case onMainActor = "onMainActor().freeWith(vc)"
        case atQueueMain = "atQueue(.main).freeWith(vc)"
        case both = "onMainActor().freeWith(vc) and atQueue(.main).freeWith(vc)"
    }

    static let rounds = 150
    static let ownersPerRound = 40

    @Test(
        "owners bound with onMainActor() or atQueue(.main) and released on the main actor are deinitialized on the main queue, while another thread dispatches an unrelated type and purges",
        arguments: Binding.allCases
    )
    func ownersDeinitOnMainQueue(binding: Binding) async {
        #expect(MainQueue.probe(), "the main queue must be serviced for this test to mean anything")
        let bus = EventBus()
        let record = Record()
        let screens = await MainActor.run { Screens() }

        // Bus work on another thread: unrelated dispatches (which drive the periodic sweep) and
        // explicit purges, until told to stop (or 60 s, so that a lost stop cannot hang the run).
        let stop = Shared(false)
        let backgroundDone = DispatchSemaphore(value: 0)
        let backgroundOperations = Shared(0)
        Thread.detach {
            let deadline = DispatchTime.now() + .seconds(60)
            var operations = 0
            while !stop.value && DispatchTime.now() < deadline {
                for _ in 0..<32 { bus.dispatch(Unrelated()) }
                bus.purge()
                operations += 33
            }
            backgroundOperations.withLock { $0 = operations }
            backgroundDone.signal()
        }

        for _ in 0..<Self.rounds {
            await MainActor.run {
                for _ in 0..<Self.ownersPerRound {
                    let controller = ViewController(record: record)
                    if binding != .atQueueMain {
                        bus.on(Shown.self).onMainActor().freeWith(controller).next { owner, _ in owner.shown += 1 }
                    }
                    if binding != .onMainActor {
                        bus.on(Shown.self).atQueue(.main).freeWith(controller).next { _, _ in }
                    }
                    screens.controllers.append(controller)
                }
            }
            // Let the background thread sweep over the live owners for a moment.
            try? await Task.sleep(nanoseconds: 200_000)
            // The main actor drops its (only) references: each deinit must run right here, or, if
            // the bus still had an owner in hand, later on the main queue.
            await MainActor.run { screens.controllers.removeAll() }
        }

        stop.withLock { $0 = true }
        #expect(backgroundDone.wait(timeout: .now() + defaultTimeout) == .success, "the background thread did not stop")
        let total = Self.rounds * Self.ownersPerRound
        // Deinits the bus deferred to the main queue run there soon.
        #expect(
            await waitUntil { record.deinits.value == total },
            "\(record.deinits.value) of \(total) owners were deinitialized")
        #expect(
            record.offMainQueue.value == 0,
            "\(record.offMainQueue.value) of \(total) main-actor owners were deinitialized off the main queue"
        )
        print(
            "Main-queue release (\(binding.rawValue)): \(total) owners released on the main actor in \(Self.rounds) rounds "
                + "while another thread made \(backgroundOperations.value) bus calls (unrelated dispatches, purges); "
                + "\(record.offMainQueue.value) deinits ran off the main queue"
        )
        withExtendedLifetime(bus) {}
    }
}

/// This file's mark on the main queue (set once, on first use).
private let mainQueueKey = DispatchSpecificKey<UInt8>()
private let markMainQueue: Void = DispatchQueue.main.setSpecific(key: mainQueueKey, value: 1)
