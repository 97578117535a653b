import Dispatch

@testable import EventBus

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Helpers for the reliability battery (Tests/EventBusTests/Reliability/).

/// How long the stress suites run: `EVENTBUS_STRESS_SECONDS` (default 1).
let stressSeconds: Double = environmentInt("EVENTBUS_STRESS_SECONDS").map(Double.init) ?? 1

/// Whether the suite runs under AddressSanitizer (CI sets `EVENTBUS_ASAN=1` for that stage).
let underAddressSanitizer = environmentFlag("EVENTBUS_ASAN")

/// A logical clock shared by every thread of a stress test. A stamp is taken under a lock, so stamps
/// are totally ordered and consistent with happens-before.
final class LogicalClock: Sendable {
    private let value = Shared(0)

    /// Advances the clock and returns the new time.
    func tick() -> Int { value.withLock { $0 += 1; return $0 } }

    /// The current time, without advancing it.
    var now: Int { value.value }
}

/// A thread that calls into a bus on request, used to prove that user code never runs under the
/// bus's lock: user code (a handler, a `deinit`) asks the probe to make a bus call and waits for it
/// with a timeout. If the bus held its lock around that user code, the probe's call would block on
/// the lock and the wait would time out: the test fails instead of deadlocking.
final class BusCallProbe: Sendable {
    private let queue = DispatchQueue(label: "EventBusTests.BusCallProbe")

    /// Runs `call` on the probe's thread and returns whether it finished within `timeout`.
    func completes(timeout: DispatchTimeInterval = .seconds(2), _ call: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        queue.async {
            call()
            done.signal()
        }
        return done.wait(timeout: .now() + timeout) == .success
    }

    /// The calls every probe makes: read the count, subscribe, dispose, dispatch another type.
    static func touch(_ bus: EventBus) {
        _ = bus.subscriptionCount
        bus.on(ProbeEvent.self).next { _ in }.dispose()
        bus.dispatch(ProbeEvent())
        bus.purge()
    }
}

struct ProbeEvent: Event {}

/// Runs `action` from its `deinit`: capture one in a handler to run code when the handler is released.
final class DeinitAction: @unchecked Sendable {
    // @unchecked Sendable: `action` is immutable and only called once, from deinit.
    private let action: @Sendable () -> Void
    init(_ action: @escaping @Sendable () -> Void) { self.action = action }
    deinit { action() }
}

/// The process's resident set size in bytes, from /proc/self/statm; `nil` where there is no /proc.
func residentBytes() -> Int? {
    #if os(Linux)
    guard let file = fopen("/proc/self/statm", "r") else { return nil }
    defer { fclose(file) }
    var size = 0
    var resident = 0
    guard fscanf_statm(file, &size, &resident) else { return nil }
    return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
    return nil
    #endif
}

#if os(Linux)
/// Reads the first two numbers of /proc/self/statm (fscanf is not available to Swift: variadic).
private func fscanf_statm(_ file: UnsafeMutablePointer<FILE>, _ size: inout Int, _ resident: inout Int) -> Bool {
    var buffer = [CChar](repeating: 0, count: 128)
    guard fgets(&buffer, Int32(buffer.count), file) != nil else { return false }
    let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let fields = line.split(separator: " ")
    guard fields.count >= 2, let first = Int(fields[0]), let second = Int(fields[1]) else { return false }
    size = first
    resident = second
    return true
}
#endif

/// The first index in `0..<count` for which `isAfter` is true, given that it is monotonic
/// (false…false true…true); `count` if none.
func partitionPoint(_ count: Int, _ isAfter: (Int) -> Bool) -> Int {
    var low = 0
    var high = count
    while low < high {
        let middle = (low + high) / 2
        if isAfter(middle) { high = middle } else { low = middle + 1 }
    }
    return low
}

/// Seconds since `start`, for the lines stress tests print.
func secondsSince(_ start: DispatchTime) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
}

/// `seconds` with two decimals (no Foundation).
func formatted(_ seconds: Double) -> String {
    let hundredths = Int((seconds * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
}
