// The one file of the core's Swift code with platform `#if`s (the C shim's `EventBusShims.c` has the
// others; the NotificationCenter bridge has its own for Apple-only notification names): the lock
// every shared structure uses.
//
// Shape learned from swift-nio's `NIOLock` and swift-async-algorithms' `Locking.swift`: the mutex
// is tail-allocated in a `ManagedBuffer` (never a plain stored `pthread_mutex_t`, which Swift may
// move), and debug builds use an error-checking mutex so a re-entrant `lock()` traps with a clear
// message instead of deadlocking. On Windows the primitive is an `SRWLOCK`, as in `NIOLock`: it
// needs no destruction and has no error-checking mode (a re-entrant lock deadlocks there). The
// Windows branch is written to the WinSDK API but not built in CI (see the README's platform table).

#if os(Windows)
    import WinSDK
#elseif canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    @preconcurrency import Glibc
#elseif canImport(Musl)
    @preconcurrency import Musl
#elseif canImport(Android)
    @preconcurrency import Android
#else
    #error("EventBus's lock does not know this platform's C library.")
#endif

/// A value protected by a mutex.
///
/// `withLock` is the only way in. The closure must not run user code: callers decide under the lock,
/// return what to do, and do it after unlocking.
package struct Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: `State` is only reached through `withLock`, which holds the mutex. What a
    // `withLock` closure returns leaves the lock: callers return only values they may hand to the
    // calling thread (the index returns nodes it has pinned or retained, and what it retired, for
    // the caller to deliver to or release after unlocking).
    private let storage: LockStorage<State>

    package init(_ initial: State) {
        storage = LockStorage.make(initial)
    }

    /// Lets other threads run before the caller takes the lock again: a loop of short critical
    /// sections would otherwise re-acquire the (unfair) mutex before a waiting thread wakes.
    static func yieldToWaiters() {
        #if os(Windows)
            _ = SwitchToThread()
        #else
            sched_yield()
        #endif
    }

    /// Runs `body` with exclusive access to the state.
    @inline(__always)
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }
}

#if os(Windows)
    /// The platform's mutex: a slim reader/writer lock, taken exclusively.
    typealias LockPrimitive = SRWLOCK
#else
    /// The platform's mutex.
    typealias LockPrimitive = pthread_mutex_t
#endif

/// The state and its mutex in one allocation.
final class LockStorage<State>: ManagedBuffer<State, LockPrimitive> {
    static func make(_ initial: State) -> LockStorage<State> {
        let buffer = LockStorage<State>.create(minimumCapacity: 1) { _ in initial }
        // `create` is a class method: called on `LockStorage<State>`, it makes one.
        let storage = unsafeDowncast(buffer, to: LockStorage<State>.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            #if os(Windows)
                InitializeSRWLock(mutex)
            #else
                var attributes = pthread_mutexattr_t()
                pthread_mutexattr_init(&attributes)
                defer { pthread_mutexattr_destroy(&attributes) }
                #if DEBUG
                    // Debug builds: a re-entrant lock() fails (and traps below) instead of deadlocking.
                    pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
                #endif
                let error = pthread_mutex_init(mutex, &attributes)
                precondition(error == 0, "pthread_mutex_init failed: \(error)")
            #endif
        }
        return storage
    }

    deinit {
        #if !os(Windows)  // an SRWLOCK needs no destruction
            withUnsafeMutablePointerToElements { mutex in
                let error = pthread_mutex_destroy(mutex)
                precondition(error == 0, "pthread_mutex_destroy failed: \(error)")
            }
        #endif
    }

    /// Runs `body` with exclusive access to the state.
    @inline(__always)
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { state, mutex in
            #if os(Windows)
                AcquireSRWLockExclusive(mutex)
                defer { ReleaseSRWLockExclusive(mutex) }
            #else
                let error = pthread_mutex_lock(mutex)
                precondition(
                    error == 0,
                    "EventBus lock: pthread_mutex_lock failed (\(error)); re-entrant use of a bus lock is a bug"
                )
                defer { pthread_mutex_unlock(mutex) }
            #endif
            return try body(&state.pointee)
        }
    }
}
