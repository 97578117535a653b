import Dispatch
import Testing

@testable import EventBus
@testable import EventBusFoundation

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

/// Whether the test binary was built with ThreadSanitizer or AddressSanitizer (`swift test
/// --sanitize=…`), found by their runtimes' entry points: their instrumentation makes every frame
/// several times larger, so the tests of the stack a nested dispatch needs give those builds more.
let underStackHungrySanitizer: Bool = {
    #if canImport(Darwin)
        let everywhere = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
    #else
        let everywhere: UnsafeMutableRawPointer? = nil  // RTLD_DEFAULT
    #endif
    let entryPoints: [String] = ["__tsan_init", "__asan_init"]
    return underAddressSanitizer || entryPoints.contains { dlsym(everywhere, $0) != nil }
}()

/// A logical clock shared by every thread of a stress test. A stamp is taken under a lock, so stamps
/// are totally ordered and consistent with happens-before.
final class LogicalClock: Sendable {
    private let value = Shared(0)

    /// Advances the clock and returns the new time.
    func tick() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }

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
        requireOffThePool("BusCallProbe.completes")
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
        guard readStatm(file, &size, &resident) else { return nil }
        return resident * Int(sysconf(Int32(_SC_PAGESIZE)))
    #else
        return nil
    #endif
}

#if os(Linux)
    /// Reads the first two numbers of /proc/self/statm (fscanf is not available to Swift: variadic).
    private func readStatm(_ file: UnsafeMutablePointer<FILE>, _ size: inout Int, _ resident: inout Int) -> Bool {
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

/// Runs `count` copies of `body`, each on its own thread, and awaits them without blocking a
/// cooperative thread (it polls); returns whether all finished within `seconds`. The async stress
/// tests use it so that their consumer tasks keep the cooperative pool while the threads run.
func concurrentlyAwaiting(_ count: Int, within seconds: UInt64, _ body: @escaping @Sendable (Int) -> Void) async -> Bool
{
    let finished = Shared(0)
    for index in 0..<count {
        Thread.detach {
            body(index)
            finished.increment()
        }
    }
    return await waitUntil(timeout: .seconds(Int(seconds))) { finished.value == count }
}

/// The first violations a stress test found (at most 10 kept, then "…").
final class Violations {
    private(set) var list: [String] = []

    func add(_ message: @autoclosure () -> String) {
        if list.count < 10 { list.append(message()) } else if list.count == 10 { list.append("…") }
    }

    var isEmpty: Bool { list.isEmpty }
    var description: String { list.joined(separator: "\n") }
}

/// The oracle's check of one subscription against the clock stamps of every dispatch, shared by
/// the stress oracles of the isolation and bridge paths (same rules as `ConcurrencyOracleTests`).
///
/// - `got[thread]`: the sequence numbers received from each dispatching thread, in arrival order.
/// - `stamps[thread][seq]`: the clock before and after that dispatch.
/// - `accepts(seq)`: whether the subscription's keys select the event.
/// - `mustEnd`: events dispatched wholly inside `(subscribeReturned, mustEnd)` must have been
///   received (`nil`: no such promise, e.g. a stream ended by cancellation).
/// - `disposeReturned`: nothing dispatched wholly after it may be received (`nil`: not checked).
/// - `gapFree`: between two received events of a thread, every accepted event of that thread
///   dispatched after `subscribeReturned` was received too (a subscription that was live for a
///   later event was live for the earlier one).
///
/// Returns (received, required) counts for the printed summary.
@discardableResult
func checkWindow(
    _ label: String,
    got: [[Int]],
    stamps: [[(start: Int, end: Int)]],
    subscribeCalled: Int,
    subscribeReturned: Int,
    mustEnd: Int?,
    disposeReturned: Int?,
    gapFree: Bool = false,
    accepts: (Int) -> Bool,
    into violations: Violations
) -> (received: Int, required: Int) {
    var received = 0
    var required = 0
    for thread in stamps.indices {
        let events = stamps[thread]
        let seqs = got[thread]
        received += seqs.count
        let mayFrom = partitionPoint(events.count) { events[$0].end > subscribeCalled }
        let mayTo =
            disposeReturned.map { end in partitionPoint(events.count) { events[$0].start > end } } ?? events.count
        let mustFrom = partitionPoint(events.count) { events[$0].start > subscribeReturned }
        if zip(seqs, seqs.dropFirst()).contains(where: { $0 >= $1 }) {
            violations.add("\(label) got thread \(thread)'s events duplicated or out of order: \(seqs.prefix(20))")
        }
        if let outside = seqs.first(where: { !(mayFrom..<mayTo).contains($0) }) {
            violations.add(
                "\(label) got event \(thread):\(outside), dispatched wholly outside its subscription "
                    + "(may receive \(mayFrom)..<\(mayTo))")
        }
        if let unselected = seqs.first(where: { !accepts($0) }) {
            violations.add("\(label) got event \(thread):\(unselected), which its keys do not select")
        }
        let receivedSet = Set(seqs)
        if let mustEnd {
            let mustTo = partitionPoint(events.count) { events[$0].end >= mustEnd }
            if mustFrom < mustTo {
                let must = (mustFrom..<mustTo).filter(accepts)
                required += must.count
                if let missing = must.first(where: { !receivedSet.contains($0) }) {
                    violations.add("\(label) missed event \(thread):\(missing), dispatched while it was live")
                }
            }
        }
        if gapFree, let last = seqs.last, mustFrom <= last {
            if let hole = (mustFrom...last).first(where: { accepts($0) && !receivedSet.contains($0) }) {
                violations.add("\(label) skipped event \(thread):\(hole) but received the later \(thread):\(last)")
            }
        }
    }
    return (received, required)
}

/// A task executor outside the cooperative pool: each job on a serial queue of its own, which
/// Dispatch runs on its overcommit pool. The stream oracle runs its consumers here, so that they do
/// not compete for the pool with the actor deliveries of the suites running beside it. (It used a
/// concurrent queue, meaning to leave the pool; on Linux a concurrent queue's threads *are* the
/// pool's: Dispatch's non-overcommit root queue, which Swift's global executor uses.)
final class QueueTaskExecutor: TaskExecutor {
    private let label: String

    init(label: String) { self.label = label }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue(label: label).async { job.runSynchronously(on: executor) }
    }
}
