// Measures the off-thread contenders (OffThread.swift) and prints the table `EventBusMailbox`
// shows: per contender, the median of several repetitions of
//
// - a backlog: `events` events sent to a held consumer (enqueue time per event, heap per waiting
//   event), then the gate opens and the consumer drains them (drain time per event); the heap in
//   use before the contender is built, with everything waiting (peak) and once drained, with the
//   subscription still alive (after);
// - a running consumer: `events` events sent while the consumer takes them, until the last ran;
// - an idle consumer: one event at a time, the next sent once the last ran; the time from the send
//   to the handler (the median of `latencySamples`).
//
// Repetitions run every contender in turn, so that the load of the machine shifts all of them
// alike; compare ratios within one run. Heap figures come from the allocator (`HeapProbe`:
// `mallinfo2()` on glibc), not RSS, which glibc does not give back.

import Dispatch
import Foundation
import HeapProbe

/// What `offThreadReport` measures and how much.
public struct OffThreadOptions: Sendable {
    /// Events per backlog and per running measurement.
    public var events = 1_000_000
    /// Repetitions; each figure is their median.
    public var repetitions = 5
    /// Events sent one at a time to an idle consumer, per repetition.
    public var latencySamples = 5_000
    /// Only the contenders whose name contains this, if set.
    public var filter: String?

    public init() {}

    /// The contenders these options select.
    public var contenders: [OffThreadContender] {
        offThreadContenders().filter { contender in filter.map { contender.name.contains($0) } ?? true }
    }
}

/// Allocations per event of a backlog: while the producer enqueues, and while the consumer drains.
public struct BacklogMallocs: Sendable {
    public let enqueue: Double
    public let drain: Double

    public init(enqueue: Double, drain: Double) {
        self.enqueue = enqueue
        self.drain = drain
    }
}

/// Whether ordo-one/malloc-interposer is preloaded, so that `countBacklogMallocs` can count.
public var mallocsCountable: Bool { heap_probe_interposed() }

/// Counts, for each selected contender that holds a backlog, the allocations of one backlog of
/// `options.events` (every thread's, as package-benchmark counts them). Needs the interposer
/// preloaded (`mallocsCountable`), whose per-allocation header would distort the heap figures: run
/// it in a process of its own.
public func countBacklogMallocs(_ options: OffThreadOptions) -> [String: BacklogMallocs] {
    var counts: [String: BacklogMallocs] = [:]
    for contender in options.contenders where contender.modes.contains(.backlog) {
        let events = options.events
        let countdown = Countdown()
        let subject = contender.make(OffThreadSetup(countdown: countdown, held: true, capacity: events))
        countdown.arm(events)
        heap_probe_count_mallocs(true)
        subject.produce(0..<events)
        heap_probe_count_mallocs(false)
        let enqueue = heap_probe_mallocs()
        heap_probe_count_mallocs(true)
        subject.release()
        countdown.wait()
        settleFrees()
        heap_probe_count_mallocs(false)
        let drain = heap_probe_mallocs()
        subject.tearDown()
        counts[contender.name] = BacklogMallocs(
            enqueue: Double(enqueue) / Double(events), drain: Double(drain) / Double(events))
    }
    return counts
}

/// Runs every selected contender `options.repetitions` times and returns the Markdown table of the
/// medians, with `mallocs` (from `countBacklogMallocs` in another process) in its column.
/// `progress` is told what runs.
public func offThreadReport(
    _ options: OffThreadOptions, mallocs: [String: BacklogMallocs]?, progress: (String) -> Void
) -> String {
    let contenders = options.contenders
    var runs: [String: [Figures]] = [:]
    for repetition in 1...options.repetitions {
        for contender in contenders {
            progress("repetition \(repetition)/\(options.repetitions): \(contender.name)")
            runs[contender.name, default: []].append(measure(contender, options))
        }
    }
    var table = """
        | Contender | backlog: enqueue (ns/event) | backlog: drain (ns/event) | mallocs per event: enqueue + drain \
        | heap per waiting event (B) | heap in use: before → peak → drained (MiB) \
        | consumer running (ns/event) | idle consumer: send → handler, p50 (µs) |
        | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |

        """
    for contender in contenders {
        let figures = runs[contender.name] ?? []
        func median(_ field: KeyPath<Figures, Double?>) -> Double? {
            let values = figures.compactMap { $0[keyPath: field] }.sorted()
            guard !values.isEmpty else { return nil }
            let middle = values.count / 2
            return values.count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
        }
        let heap = [\Figures.heapBefore, \.heapPeak, \.heapAfter].map { median($0) }
        let cells = [
            contender.title,
            format(median(\.enqueue), digits: 0),
            format(median(\.drain), digits: 0),
            mallocs?[contender.name].map { "\(format($0.enqueue, digits: 2)) + \(format($0.drain, digits: 2))" }
                ?? "—",
            format(median(\.bytesPerEvent), digits: 0),
            heap.contains { $0 == nil }
                ? "—" : heap.map { format($0.map { $0 / 1_048_576 }, digits: 1) }.joined(separator: " → "),
            format(median(\.running), digits: 0),
            format(median(\.latency).map { $0 / 1_000 }, digits: 1),
        ]
        table += "| " + cells.joined(separator: " | ") + " |\n"
    }
    return table
}

/// One repetition's figures for one contender (nil: not measured for it).
private struct Figures {
    var enqueue: Double?
    var drain: Double?
    var bytesPerEvent: Double?
    var heapBefore: Double?
    var heapPeak: Double?
    var heapAfter: Double?
    var running: Double?
    var latency: Double?
}

private func measure(_ contender: OffThreadContender, _ options: OffThreadOptions) -> Figures {
    var figures = Figures()
    let events = options.events
    let countdown = Countdown()
    if contender.modes.contains(.backlog) {
        let before = heap_probe_in_use()
        let subject = contender.make(OffThreadSetup(countdown: countdown, held: true, capacity: events))
        countdown.arm(events)
        let start = now()
        subject.produce(0..<events)
        let enqueued = now()
        let peak = heap_probe_in_use()
        let released = now()
        subject.release()
        countdown.wait()
        let drained = now()
        settleFrees()
        let after = heap_probe_in_use()
        subject.tearDown()
        figures.enqueue = Double(enqueued - start) / Double(events)
        figures.drain = Double(drained - released) / Double(events)
        figures.bytesPerEvent = Double(peak - before) / Double(events)
        figures.heapBefore = Double(before)
        figures.heapPeak = Double(peak)
        figures.heapAfter = Double(after)
    }
    if contender.modes.contains(.running) {
        let subject = contender.make(OffThreadSetup(countdown: countdown, held: false, capacity: events))
        countdown.arm(events)
        let start = now()
        subject.produce(0..<events)
        countdown.wait()
        figures.running = Double(now() - start) / Double(events)
        subject.tearDown()
        settleFrees()
    }
    if contender.modes.contains(.latency) {
        let subject = contender.make(OffThreadSetup(countdown: countdown, held: false, capacity: 1))
        let warmup = 100
        var latencies: [UInt64] = []
        latencies.reserveCapacity(options.latencySamples)
        for i in 0..<(warmup + options.latencySamples) {
            countdown.arm(1)
            let start = now()
            subject.produce(i..<(i + 1))
            countdown.wait()
            if i >= warmup { latencies.append(countdown.finishedAt - start) }
        }
        subject.tearDown()
        latencies.sort()
        figures.latency = latencies.isEmpty ? nil : Double(latencies[latencies.count / 2])
    }
    settleFrees()
    return figures
}

private func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Gives what a drain or a teardown frees after the last handler ran (a batch's storage, a task)
/// time to go, before the heap is read.
private func settleFrees() { Thread.sleep(forTimeInterval: 0.1) }

/// `value` with `digits` decimals and thousands separators, "—" for nil.
private func format(_ value: Double?, digits: Int) -> String {
    guard let value else { return "—" }
    let text = String(format: "%.\(digits)f", value)
    let point = text.firstIndex(of: ".") ?? text.endIndex
    var whole = String(text[..<point])
    let sign = whole.hasPrefix("-") ? String(whole.removeFirst()) : ""
    var grouped = ""
    for (offset, digit) in whole.enumerated() {
        if offset > 0 && (whole.count - offset) % 3 == 0 { grouped += "," }
        grouped.append(digit)
    }
    return sign + grouped + text[point...]
}
