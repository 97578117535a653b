public import Dispatch

/// A clock for the sticky events' time-to-live that moves only when told: give it to
/// ``EventBus/init(clock:)`` to test ``StickyPolicy/latest(ttl:)`` without waiting.
///
/// A bus made with ``EventBus/init()`` reads the system's monotonic clock instead. Reading the
/// clock never runs your code: the bus may read it under its lock.
///
/// ```swift
/// let clock = ManualEventClock()
/// let bus = EventBus(clock: clock)
/// bus.dispatch(LoginEvent(userID: "42"), sticky: .latest(ttl: .seconds(5)))
/// clock.advance(by: .seconds(6))
/// assert(bus.sticky(LoginEvent.self) == nil)   // expired
/// ```
public final class ManualEventClock: Sendable {
    private let nanoseconds = Locked<UInt64>(0)

    /// A clock at zero.
    ///
    /// ```swift
    /// let clock = ManualEventClock()
    /// ```
    public init() {}

    /// Moves the clock forward by `interval` (never backward: a negative interval does nothing).
    /// Thread-safe.
    ///
    /// ```swift
    /// let clock = ManualEventClock()
    /// clock.advance(by: .milliseconds(250))
    /// ```
    public func advance(by interval: DispatchTimeInterval) {
        let delta = interval.nanosecondsClamped
        nanoseconds.withLock { now in now = now.addingReportingOverflow(delta).overflow ? .max : now + delta }
    }

    /// Nanoseconds since the clock was made, as moved by ``advance(by:)``.
    var now: UInt64 { nanoseconds.withLock { $0 } }
}

/// Where a bus reads the time for sticky events' TTL: the system's monotonic clock, or a
/// ``ManualEventClock``. Neither runs user code, so the registry reads it under its lock.
enum StickyClock: Sendable {
    case system
    case manual(ManualEventClock)

    var now: UInt64 {
        switch self {
        case .system: DispatchTime.now().uptimeNanoseconds
        case .manual(let clock): clock.now
        }
    }
}
