// The worst single operation on a bus holding 1,000,000 subscriptions, and how long another
// thread's bus call can stall meanwhile (issue 9, "Worst single operation at 1M subscriptions":
// every operation and every stall under 1 ms).
//
//     swift run -c release EventBusLatency                  # prints the table, exits 0
//     swift run -c release EventBusLatency --check          # exits 1 if a gated max > 1 ms
//     swift run -c release EventBusLatency --check --max-ms 2
//     swift run -c release EventBusLatency --help           # every option
//
// The population: half the subscriptions on one keyed type (`Probe`, key "crowd"), half spread over
// four other types; in each half, half are plain `next` and half `freeWith(owner)`, one owner each.
// The owners are released in waves while the operations run, so the bus always has dead owners to
// reclaim.
//
// Phase 1, one thread: rounds of single operations, each timed on its own (subscribe plain,
// subscribe `freeWith`, dispose, dispatch of a type nobody subscribes to, dispatch to the one
// subscriber of `Probe` key "solo" while the crowd sits on the same type under another key),
// with waves of owners dying and a few `purge()` calls in between.
// Phase 2, two threads: a second thread dispatches its own type (one subscriber) in a tight loop and
// records each call's latency, first for 0.5 s while the main thread spins without touching the bus
// (so any stall there is the bus's own work landing in that dispatch, such as a periodic sweep),
// then for up to 2.5 s around a bare `Mutex` instead of the bus (the floor: what any lock's waiter
// sees on this machine while the main thread churns owners), then while the main thread churns
// (subscribe-heavy: two subscribes, one owner dying and half a dispose per step; waves of owners
// dying; now and then a dispatch to the whole crowd), then during one `purge()`.
//
// Latencies are wall clock (`DispatchTime`), so they include the machine's scheduling noise: the two
// "clock only" rows (an empty interval timed on each thread, interleaved with the operations, so
// under the same load) measure that noise and are not gated. `purge()` reclaims every dead owner
// now, O(N) by contract: its own latency and the stall it causes are reported but gated only with
// `--gate-purge`; the dispatch to the crowd delivers to N/2 handlers and is reported only (the
// stall it causes on the other thread is gated). Percentiles come from a log-linear histogram
// (within 1.6 %); max is exact.

import Dispatch
import EventBus
import Foundation
import Synchronization

// MARK: - Options

struct Options {
    var subscriptions = 1_000_000
    var rounds = 400_000
    var churnSteps = 300_000
    var budgetSeconds = 20.0
    var check = false
    var gatePurge = false
    var maxMilliseconds = 1.0

    static let usage = """
        usage: EventBusLatency [--check] [--max-ms MS] [--gate-purge] [--subscriptions N]
                               [--rounds N] [--churn N] [--budget SECONDS]

          --check            exit 1 if a gated row's max exceeds --max-ms (default: print, exit 0)
          --max-ms MS        the threshold for --check, in milliseconds (default 1)
          --gate-purge       also gate purge() and the stall it causes (O(N) by contract)
          --subscriptions N  subscriptions on the bus (default 1000000)
          --rounds N         phase 1: rounds of single operations (default 400000)
          --churn N          phase 2: churn steps on the main thread (default 300000)
          --budget SECONDS   each phase stops early after this long (default 20)
        """

    init(_ arguments: [String]) {
        var rest = arguments[...]
        func value(_ name: String) -> Double {
            guard let text = rest.popFirst(), let number = Double(text), number > 0 else {
                Self.fail("\(name) needs a positive number")
            }
            return number
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--check": check = true
            case "--gate-purge": gatePurge = true
            case "--max-ms": maxMilliseconds = value(argument)
            case "--subscriptions": subscriptions = Int(value(argument))
            case "--rounds": rounds = Int(value(argument))
            case "--churn": churnSteps = Int(value(argument))
            case "--budget": budgetSeconds = value(argument)
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default: Self.fail("unknown argument \(argument)")
            }
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("EventBusLatency: \(message)\n\(usage)\n".utf8))
        exit(64)
    }
}

// MARK: - Events and subscribers

/// The crowded keyed type: half the population under "crowd", one subscriber under "solo".
struct Probe: Event {
    let value: Int
    let key: String
    var eventType: String? { key }
}

/// The other types the rest of the population sits on.
struct Filler<Tag>: Event {
    let value: Int
}
enum TagA {}
enum TagB {}
enum TagC {}
enum TagD {}

/// A type nobody subscribes to.
struct Nobody: Event {
    let value: Int
}

/// The stall thread's own type (one subscriber).
struct Beat: Event {
    let value: Int
}

/// Where handlers put what they receive, so the work is not optimised away.
///
/// @unchecked Sendable: every write is a relaxed, racy add that nothing reads for correctness.
final class Sink: @unchecked Sendable {
    var total = 0
}

/// An object a subscription is bound to (`freeWith`).
final class Owner: Sendable {}

let sink = Sink()
let crowd = "crowd"
let solo = "solo"

/// Subscribes a plain or owner-bound handler to the population's type number `slot` (0: `Probe`
/// "crowd"; 1 to 4: the fillers).
@inline(never)
func subscribe(_ bus: EventBus, slot: Int, owner: Owner?) -> EventToken {
    switch (slot, owner) {
    case (0, nil): return bus.on(Probe.self).ofType(crowd).next { sink.total &+= $0.value }
    case (0, let owner?): return bus.on(Probe.self).ofType(crowd).freeWith(owner).next { sink.total &+= $1.value }
    case (1, nil): return bus.on(Filler<TagA>.self).next { sink.total &+= $0.value }
    case (1, let owner?): return bus.on(Filler<TagA>.self).freeWith(owner).next { sink.total &+= $1.value }
    case (2, nil): return bus.on(Filler<TagB>.self).next { sink.total &+= $0.value }
    case (2, let owner?): return bus.on(Filler<TagB>.self).freeWith(owner).next { sink.total &+= $1.value }
    case (3, nil): return bus.on(Filler<TagC>.self).next { sink.total &+= $0.value }
    case (3, let owner?): return bus.on(Filler<TagC>.self).freeWith(owner).next { sink.total &+= $1.value }
    case (_, nil): return bus.on(Filler<TagD>.self).next { sink.total &+= $0.value }
    case (_, let owner?): return bus.on(Filler<TagD>.self).freeWith(owner).next { sink.total &+= $1.value }
    }
}

// MARK: - Measuring

@inline(__always)
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Latencies in nanoseconds: a log-linear histogram (64 sub-buckets per power of two, so a
/// percentile is within 1.6 % of the true value) and the exact maximum. Recording never allocates.
struct Histogram {
    private var counts = [Int](repeating: 0, count: 64 * 64)
    private(set) var count = 0
    private(set) var max: UInt64 = 0

    mutating func record(_ nanoseconds: UInt64) {
        count += 1
        if nanoseconds > max { max = nanoseconds }
        counts[Self.bucket(nanoseconds)] += 1
    }

    static func bucket(_ value: UInt64) -> Int {
        if value < 64 { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount  // >= 6
        return 64 + (exponent - 6) * 64 + Int((value >> UInt64(exponent - 6)) & 63)
    }

    static func upperBound(_ bucket: Int) -> UInt64 {
        if bucket < 64 { return UInt64(bucket) }
        let exponent = (bucket - 64) / 64 + 6
        return ((UInt64(64 + (bucket - 64) % 64) + 1) << UInt64(exponent - 6)) - 1
    }

    /// The smallest recorded-bucket bound below which a fraction `p` of the samples lie.
    func percentile(_ p: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = Swift.max(1, Int((p * Double(count)).rounded(.up)))
        var seen = 0
        for (bucket, n) in counts.enumerated() where n > 0 {
            seen += n
            if seen >= rank { return Swift.min(Self.upperBound(bucket), max) }
        }
        return max
    }
}

/// Times `body` into `histogram`.
@inline(__always)
func timed<T>(_ histogram: inout Histogram, _ body: () -> T) -> T {
    let start = now()
    let result = body()
    histogram.record(now() &- start)
    return result
}

/// The stall thread's phases, set by the main thread.
enum StallPhase: Int, CaseIterable {
    case baseline, floor, churn, purge, stop
}

/// Involuntary context switches of the calling thread so far: how often the scheduler took its
/// core away (Linux; 0 elsewhere). A thread preempted while it holds a lock stalls every waiter.
func involuntarySwitches() -> Int {
    #if os(Linux)
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD (a GNU extension Swift does not import)
        return usage.ru_nivcsw
    #else
        return 0
    #endif
}

/// What the stall thread shares with the main thread.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class StallControl: @unchecked Sendable {
    // @unchecked Sendable: `phase` is atomic; `histograms` and `calls` are written by the stall
    // thread only and read by the main thread after `finished` was signalled.
    let phase = Atomic<Int>(StallPhase.baseline.rawValue)
    let started = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    var histograms = [Histogram](repeating: Histogram(), count: StallPhase.allCases.count)
    var noise = Histogram()
    /// The stall thread's involuntary context switches in each phase.
    var switches = [Int](repeating: 0, count: StallPhase.allCases.count)
    /// The floor's lock: the standard library's `Mutex` around a counter (a trivial critical section).
    let floorLock = Mutex<Int>(0)
}

/// Resident set size in MiB (Linux; 0 elsewhere).
func residentMiB() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / (1 << 20)
}

// MARK: - The report

struct Row {
    let phase: String
    let name: String
    let histogram: Histogram
    let gated: Bool
}

func milliseconds(_ nanoseconds: UInt64) -> String {
    String(format: "%.4f", Double(nanoseconds) / 1e6)
}

func microseconds(_ nanoseconds: UInt64) -> String {
    String(format: "%.2f", Double(nanoseconds) / 1e3)
}

// MARK: - Main

@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
func run(_ options: Options) -> Bool {
    let n = options.subscriptions
    let budget = UInt64(options.budgetSeconds * 1e9)
    let bus = EventBus()

    // The population. i % 4: 0 plain on Probe "crowd", 1 plain on a filler, 2 owner-bound on Probe
    // "crowd", 3 owner-bound on a filler (fillers in turn).
    let setupStart = now()
    var populationTokens: [EventToken] = []  // the plain ones, for disposes
    populationTokens.reserveCapacity(n / 2 + 1)
    var owners: [Owner?] = []
    owners.reserveCapacity(n / 2 + 1)
    for i in 0..<n {
        let slot = i % 2 == 0 ? 0 : 1 + (i / 4) % 4
        if i % 4 < 2 {
            populationTokens.append(subscribe(bus, slot: slot, owner: nil))
        } else {
            let owner = Owner()
            owners.append(owner)
            _ = subscribe(bus, slot: slot, owner: owner)
        }
    }
    _ = bus.on(Probe.self).ofType(solo).next { sink.total &+= $0.value }
    _ = bus.on(Beat.self).next { sink.total &+= $0.value }
    bus.dispatch(Probe(value: 0, key: solo))  // steady state: whatever the bus caches is built
    bus.dispatch(Beat(value: 0))
    bus.dispatch(Nobody(value: 0))
    let setupSeconds = Double(now() - setupStart) / 1e9
    print(
        "EventBusLatency: \(bus.subscriptionCount) subscriptions (half owner-bound) built in "
            + String(format: "%.1f s", setupSeconds) + ", RSS \(residentMiB()) MiB")

    // Owners die in 40 waves over the two phases (20 each); population tokens are disposed in
    // a stride so that disposes hit every part of the lists.
    let waveSize = max(1, owners.count / 40)
    var nextWave = 0
    func releaseWave() {
        let end = min(owners.count, nextWave + waveSize)
        for i in nextWave..<end { owners[i] = nil }
        nextWave = end
    }
    var disposeCursor = 0
    let stride = 7_919  // prime: visits every index once
    func nextPopulationToken() -> EventToken? {
        guard disposeCursor < populationTokens.count else { return nil }
        let index = (disposeCursor * stride) % populationTokens.count
        disposeCursor += 1
        return populationTokens[index]
    }

    // Phase 1: single operations, one thread.
    var clockOnly = Histogram()
    var subscribePlain = Histogram()
    var subscribeOwned = Histogram()
    var dispose = Histogram()
    var dispatchNone = Histogram()
    var dispatchOne = Histogram()
    var purge = Histogram()
    var freshTokens: [EventToken] = []
    freshTokens.reserveCapacity(options.rounds)
    var freshOwners: [Owner] = []
    freshOwners.reserveCapacity(options.rounds)
    let rounds = options.rounds
    let waveEvery = max(1, rounds / 20)
    let purgeEvery = max(1, rounds / 4)
    let phase1Start = now()
    var roundsDone = 0
    for round in 0..<rounds {
        timed(&clockOnly) {}
        if round % 2 == 0 {
            let token = timed(&subscribePlain) { subscribe(bus, slot: 0, owner: nil) }
            freshTokens.append(token)
        } else {
            let owner = Owner()
            freshOwners.append(owner)
            _ = timed(&subscribeOwned) { subscribe(bus, slot: 1 + (round / 2) % 4, owner: owner) }
        }
        timed(&dispatchOne) { bus.dispatch(Probe(value: round, key: solo)) }
        timed(&dispatchNone) { bus.dispatch(Nobody(value: round)) }
        // Disposes: alternately a population token and one subscribed in this phase.
        if round % 2 == 0, let token = nextPopulationToken() {
            timed(&dispose) { token.dispose() }
        } else if let token = freshTokens.popLast() {
            timed(&dispose) { token.dispose() }
        }
        if round % waveEvery == waveEvery - 1 {
            releaseWave()
            freshOwners.removeAll(keepingCapacity: true)
        }
        if round % purgeEvery == purgeEvery - 1 { timed(&purge) { bus.purge() } }
        roundsDone = round + 1
        if round % 1024 == 0 && now() - phase1Start > budget { break }
    }
    let phase1Seconds = Double(now() - phase1Start) / 1e9
    print(
        "phase 1: \(roundsDone) rounds in " + String(format: "%.1f s", phase1Seconds)
            + ", \(bus.subscriptionCount) subscriptions after, RSS \(residentMiB()) MiB")

    // Phase 2: the stall thread.
    let control = StallControl()
    Thread.detachNewThread { [bus] in
        var histograms = [Histogram](repeating: Histogram(), count: StallPhase.allCases.count)
        var noise = Histogram()
        var switches = [Int](repeating: 0, count: StallPhase.allCases.count)
        var current = StallPhase.baseline.rawValue
        var switchesAtPhaseStart = involuntarySwitches()
        control.started.signal()
        var i = 0
        while true {
            let phase = control.phase.load(ordering: .relaxed)
            if phase != current {
                let switchesNow = involuntarySwitches()
                switches[current] = switchesNow - switchesAtPhaseStart
                switchesAtPhaseStart = switchesNow
                current = phase
            }
            if phase == StallPhase.stop.rawValue { break }
            let start = now()
            if phase == StallPhase.floor.rawValue {
                control.floorLock.withLock { $0 &+= 1 }
            } else {
                bus.dispatch(Beat(value: i))
            }
            let end = now()
            noise.record(now() &- end)  // the same thread's clock-only interval: scheduling noise
            histograms[phase].record(end &- start)
            i &+= 1
        }
        control.histograms = histograms
        control.noise = noise
        control.switches = switches
        control.finished.signal()
    }
    control.started.wait()

    // Baseline: the main thread spins (so both cores stay as busy as during the churn) without
    // touching the bus.
    let baselineEnd = now() + 500_000_000
    while now() < baselineEnd {}

    // The floor: the same two threads around the standard library's `Mutex` with a trivial critical
    // section, the main thread allocating an owner and letting an older one die between its
    // critical sections, as the churn does. What the other thread waits for here is what any lock
    // costs on this machine (its holder preempted, the wake-up latency), not the bus's work.
    control.phase.store(StallPhase.floor.rawValue, ordering: .relaxed)
    var floorMain = Histogram()
    var floorRing = [Owner?](repeating: nil, count: 4_096)
    let floorEnd = now() + UInt64(min(options.budgetSeconds, 2.5) * 1e9)
    var floorSteps = 0
    while now() < floorEnd {
        for _ in 0..<256 {
            floorRing[floorSteps % floorRing.count] = Owner()
            timed(&floorMain) { control.floorLock.withLock { $0 &+= 1 } }
            floorSteps += 1
        }
    }
    withExtendedLifetime(floorRing) {}

    let mainSwitchesAtChurn = involuntarySwitches()
    control.phase.store(StallPhase.churn.rawValue, ordering: .relaxed)
    var churnSubscribe = Histogram()
    var churnDispose = Histogram()
    var fanOut = Histogram()
    var churnTokens: [EventToken] = []
    churnTokens.reserveCapacity(options.churnSteps)
    // Short-lived owners: each step's owner dies `ring.count` steps later.
    var ring = [Owner?](repeating: nil, count: 4_096)
    let steps = options.churnSteps
    let churnWaveEvery = max(1, steps / 20)
    let fanOutEvery = max(1, steps / 8)
    let phase2Start = now()
    var stepsDone = 0
    for step in 0..<steps {
        let owner = Owner()
        ring[step % ring.count] = owner  // the owner subscribed ring.count steps ago dies
        _ = timed(&churnSubscribe) { subscribe(bus, slot: step % 5, owner: owner) }
        let token = timed(&churnSubscribe) { subscribe(bus, slot: (step + 2) % 5, owner: nil) }
        churnTokens.append(token)
        if step % 2 == 1 {
            if step % 4 == 1, let token = nextPopulationToken() {
                timed(&churnDispose) { token.dispose() }
            } else if let token = churnTokens.popLast() {
                timed(&churnDispose) { token.dispose() }
            }
        }
        if step % churnWaveEvery == churnWaveEvery - 1 { releaseWave() }
        if step % fanOutEvery == fanOutEvery / 2 { timed(&fanOut) { bus.dispatch(Probe(value: step, key: crowd)) } }
        stepsDone = step + 1
        if step % 1024 == 0 && now() - phase2Start > budget { break }
    }
    let phase2Seconds = Double(now() - phase2Start) / 1e9
    let mainSwitchesInChurn = involuntarySwitches() - mainSwitchesAtChurn
    control.phase.store(StallPhase.purge.rawValue, ordering: .relaxed)
    var finalPurge = Histogram()
    timed(&finalPurge) { bus.purge() }
    // Let the stall thread take a few samples after the purge, so the purge's whole stall is seen.
    let tail = now() + 20_000_000
    while now() < tail {}
    control.phase.store(StallPhase.stop.rawValue, ordering: .relaxed)
    control.finished.wait()
    print(
        "phase 2: \(stepsDone) churn steps in " + String(format: "%.1f s", phase2Seconds)
            + ", \(bus.subscriptionCount) subscriptions after the final purge(), RSS \(residentMiB()) MiB")
    print(
        "involuntary context switches during the churn: main thread \(mainSwitchesInChurn), other thread "
            + "\(control.switches[StallPhase.churn.rawValue]) (floor: other thread \(control.switches[StallPhase.floor.rawValue]))"
    )
    withExtendedLifetime((owners, freshOwners, ring, populationTokens, churnTokens)) {}

    let stall = control.histograms
    let rows = [
        Row(phase: "1", name: "subscribe (Probe \"crowd\", plain)", histogram: subscribePlain, gated: true),
        Row(phase: "1", name: "subscribe (a filler, freeWith)", histogram: subscribeOwned, gated: true),
        Row(phase: "1", name: "dispose", histogram: dispose, gated: true),
        Row(phase: "1", name: "dispatch, no subscriber", histogram: dispatchNone, gated: true),
        Row(phase: "1", name: "dispatch, 1 subscriber (Probe \"solo\")", histogram: dispatchOne, gated: true),
        Row(phase: "1", name: "purge()", histogram: purge, gated: options.gatePurge),
        Row(phase: "1", name: "clock only (noise)", histogram: clockOnly, gated: false),
        Row(phase: "2", name: "main: subscribe (churn)", histogram: churnSubscribe, gated: true),
        Row(phase: "2", name: "main: dispose (churn)", histogram: churnDispose, gated: true),
        Row(phase: "2", name: "main: dispatch to the crowd (N/2: O(N))", histogram: fanOut, gated: false),
        Row(phase: "2", name: "main: final purge()", histogram: finalPurge, gated: options.gatePurge),
        Row(
            phase: "2", name: "other thread: dispatch, main spins (no bus)",
            histogram: stall[StallPhase.baseline.rawValue], gated: true),
        Row(phase: "2", name: "floor: main: bare Mutex, owners churning", histogram: floorMain, gated: false),
        Row(
            phase: "2", name: "floor: other thread: bare Mutex, main churns",
            histogram: stall[StallPhase.floor.rawValue], gated: false),
        Row(
            phase: "2", name: "other thread: dispatch, main churns", histogram: stall[StallPhase.churn.rawValue],
            gated: true),
        Row(
            phase: "2", name: "other thread: dispatch, main in purge()", histogram: stall[StallPhase.purge.rawValue],
            gated: options.gatePurge),
        Row(phase: "2", name: "other thread: clock only (noise)", histogram: control.noise, gated: false),
    ]

    let limit = UInt64(options.maxMilliseconds * 1e6)
    func pad(_ s: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - s.count))
        return left ? padding + s : s + padding
    }
    print()
    print(
        pad("phase", 6) + pad("operation", 46) + pad("samples", 10, left: true) + pad("p50 µs", 12, left: true)
            + pad("p99 µs", 12, left: true) + pad("max ms", 12, left: true) + "  gate")
    var misses: [String] = []
    for row in rows {
        let h = row.histogram
        let verdict: String
        if !row.gated {
            verdict = "info"
        } else if h.count == 0 {
            verdict = "FAIL (no sample)"
            misses.append("\(row.name): no sample")
        } else if h.max > limit {
            verdict = "FAIL"
            misses.append("\(row.name) \(milliseconds(h.max)) ms")
        } else {
            verdict = "ok"
        }
        print(
            pad(row.phase, 6) + pad(row.name, 46) + pad("\(h.count)", 10, left: true)
                + pad(microseconds(h.percentile(0.5)), 12, left: true)
                + pad(microseconds(h.percentile(0.99)), 12, left: true)
                + pad(milliseconds(h.max), 12, left: true) + "  " + verdict)
    }
    print()
    let gatedCount = rows.filter(\.gated).count
    let noise = max(clockOnly.max, control.noise.max)
    let noiseNote =
        noise > limit / 2 ? " (machine noise up to \(milliseconds(noise)) ms: rerun on a quieter machine)" : ""
    if misses.isEmpty {
        print(
            "latency: PASS: every gated max ≤ \(options.maxMilliseconds) ms (\(gatedCount) rows, \(bus.subscriptionCount) subscriptions at the end)\(noiseNote)"
        )
        return true
    }
    print(
        "latency: FAIL: \(misses.count) of \(gatedCount) gated rows over \(options.maxMilliseconds) ms: \(misses.joined(separator: "; "))\(noiseNote)"
    )
    return false
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
    let passed = run(options)
    exit(options.check && !passed ? 1 : 0)
} else {
    print("EventBusLatency needs macOS 15 (Synchronization.Atomic)")
    exit(0)
}
