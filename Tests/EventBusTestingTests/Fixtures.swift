import Dispatch
import EventBus

struct LoginEvent: Event, Equatable {
    let userID: String
}

struct LogoutEvent: Event, Equatable {
    let userID: String
}

struct Failed: Error, Equatable {}

/// The demo's login service, as an app would have it.
struct LoginService {
    let bus: EventBus

    func logIn(_ userID: String) { bus.dispatch(LoginEvent(userID: userID)) }
    func logOut(_ userID: String) { bus.dispatch(LogoutEvent(userID: userID)) }
}

/// A screen whose subscription follows its lifetime, as in the demo.
final class ProfileScreen: Sendable {
    init(bus: EventBus) {
        bus.on(LoginEvent.self).freeWith(self).next { _, _ in }
    }
}

/// Runs `count` copies of `body` at once, each on a thread of its own, and waits (suspended: no
/// thread is held) until all have returned or `seconds` have passed; returns whether all returned.
///
/// Not `DispatchQueue.concurrentPerform` nor `DispatchQueue.global()`: on Linux their threads are
/// the cooperative pool's, which the library's actor deliveries, in tests running at the same
/// time, need to start (see `Tests/EventBusTests/Support/OffThePool.swift`). A serial queue of
/// its own runs on a thread of Dispatch's overcommit pool instead.
func onThreads(_ count: Int, within seconds: Int = 10, _ body: @escaping @Sendable (Int) -> Void) async -> Bool {
    let group = DispatchGroup()
    for index in 0..<count {
        DispatchQueue(label: "EventBusTestingTests.thread").async(group: group) { body(index) }
    }
    let waiter = Locked<CheckedContinuation<Bool, Never>?>(nil)
    let finish: @Sendable (Bool) -> Void = { finished in
        waiter.withLock { continuation in
            continuation?.resume(returning: finished)
            continuation = nil
        }
    }
    return await withCheckedContinuation { continuation in
        waiter.withLock { $0 = continuation }
        let queue = DispatchQueue(label: "EventBusTestingTests.onThreads")
        group.notify(queue: queue) { finish(true) }
        queue.asyncAfter(deadline: .now() + .seconds(seconds)) { finish(false) }
    }
}
