// The one file of the core's Swift code with platform `#if`s (the C shim's `EventBusShims.c` has the
// others; the NotificationCenter bridge has its own for Apple-only notification names): the lock
// every shared structure uses.
//
// Shape learned from swift-nio's `NIOLock` and swift-async-algorithms' `Locking.swift`: the mutex
// is tail-allocated in a `ManagedBuffer` (never a plain stored property, which Swift may move),
// and debug builds trap with a clear message on a re-entrant `lock()` instead of deadlocking.
// - Darwin: `os_unfair_lock`, as swift-async-algorithms' `Locking.swift` uses: no destruction, a
//   waiter lends its priority to the holder, and the system traps a re-entrant lock itself
//   ("Trying to recursively lock an os_unfair_lock").
// - Linux: a futex word (the shim's `eventbus_lock`: Rust's standard library's mutex, which is
//   glibc's default mutex with a short spin before sleeping, its uncontended lock and unlock
//   inline, one atomic instruction each); debug builds also record the holding thread, to catch
//   a re-entrant lock. Why not `pthread_mutex_t`: it costs every bus operation a call into libc
//   each way (callgrind, when the futex word replaced it: publish to one subscriber 744 → 685
//   instructions, subscribe + dispose 2,324 → 2,210). Why it is fair enough: the waiter's spin
//   lets it in between two critical sections of a thread that churns (EventBusLatency: another
//   thread's p99 wait 40 µs without the spin, 3 µs with), and `LockTests.waiterIsNotStarved`
//   bounds the longest wait.
// - Other Unix systems: a `pthread_mutex_t`, error-checking in debug builds.
// - Windows: an `SRWLOCK`, as in `NIOLock`: it needs no destruction and has no error-checking mode
//   (a re-entrant lock deadlocks there). Written to the WinSDK API but not built in CI (see the
//   README's platform table).

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
#if os(Linux) || os(Android)
    internal import _EventBusShims
#endif

/// A value protected by a mutex.
///
/// `withLock` is the only way in. The closure must not run user code: callers decide under the lock,
/// return what to do, and do it after unlocking.
package struct Locked<State>: @unchecked Sendable {
    // @unchecked Sendable: `State` is only reached through `withLock`, which holds the mutex. What a
    // `withLock` closure returns leaves the lock: callers return only values they may hand to the
    // calling thread (the registry returns nodes it has pinned or retained, and what it let go of, for
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
#elseif canImport(Darwin)
    /// The platform's mutex: an unfair lock (see the file's comment).
    typealias LockPrimitive = os_unfair_lock
#elseif os(Linux) || os(Android)
    /// The platform's mutex: a futex word (see the file's comment).
    struct LockPrimitive {
        /// 0 unlocked, 1 locked, 2 locked with threads possibly waiting (the shim's `eventbus_lock`).
        var word: Int32 = 0
        #if DEBUG
            /// The holding thread (`pthread_self`), 0 when unlocked: a re-entrant lock traps.
            var holder: Int = 0
        #endif
    }
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
            #elseif canImport(Darwin)
                mutex.initialize(to: os_unfair_lock())
            #elseif os(Linux) || os(Android)
                mutex.initialize(to: LockPrimitive())
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
        // An SRWLOCK, an os_unfair_lock or a futex word needs no destruction.
        #if !os(Windows) && !canImport(Darwin) && !os(Linux) && !os(Android)
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
            #elseif canImport(Darwin)
                os_unfair_lock_lock(mutex)
                defer { os_unfair_lock_unlock(mutex) }
            #elseif os(Linux) || os(Android)
                let raw = UnsafeMutableRawPointer(mutex)
                let word = (raw + MemoryLayout<LockPrimitive>.offset(of: \.word)!).assumingMemoryBound(to: Int32.self)
                #if DEBUG
                    // The holder is read and written atomically: other threads read it too.
                    let holder = (raw + MemoryLayout<LockPrimitive>.offset(of: \.holder)!).assumingMemoryBound(
                        to: Int.self)
                    let thread = Int(bitPattern: pthread_self())
                    precondition(
                        eventbus_atomic_load(holder) != thread,
                        "EventBus lock: re-entrant use of a bus lock is a bug (the lock would wait for itself)"
                    )
                    eventbus_lock(word)
                    eventbus_atomic_store(holder, thread)
                    defer {
                        eventbus_atomic_store(holder, 0)
                        eventbus_unlock(word)
                    }
                #else
                    eventbus_lock(word)
                    defer { eventbus_unlock(word) }
                #endif
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
