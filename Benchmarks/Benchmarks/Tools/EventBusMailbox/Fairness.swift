import Dispatch
import EventBus
import Foundation

// Issue 41, finding 3's probe: two actors flooded with deliveries on the 2-thread cooperative pool,
// and a third actor's single event. Goal: it waits no more than 20 ms, or 2× a plain `Task`'s start
// latency in the same run, whichever is larger. Wall clock, one run: a probe, not a gate.

/// An event for a flooded actor (keyed by actor) or for the third one.
struct FairnessEvent: Event {
    let target: String
    let sent: UInt64
    var eventType: String? { target }
}

/// An actor that records how long its deliveries waited, and busies itself a little on each.
actor FairnessActor {
    var waits: [UInt64] = []
    var handled = 0

    func record(_ event: FairnessEvent, work: Int) {
        handled += 1
        if event.target == "single" { waits.append(DispatchTime.now().uptimeNanoseconds - event.sent) }
        var spin = 0
        for index in 0..<work { spin &+= index }
        if spin == -1 { print(spin) }
    }
}

/// Runs the probe and returns its Markdown lines.
func fairnessReport(samples: Int = 40) async -> String {
    let bus = EventBus()
    let flooded = [FairnessActor(), FairnessActor()]
    let third = FairnessActor()
    var tokens: [EventToken] = []
    for (index, actor) in flooded.enumerated() {
        tokens.append(
            bus.on(FairnessEvent.self).ofType("flood\(index)").isolated(to: actor).next { actor, event in
                actor.record(event, work: 2_000)
            })
    }
    tokens.append(
        bus.on(FairnessEvent.self).ofType("single").isolated(to: third).next { actor, event in
            actor.record(event, work: 0)
        })
    let stop = Flag()
    for index in 0..<2 {
        Thread.detachNewThread {
            while !stop.isSet {
                for _ in 0..<1_000 {
                    bus.dispatch(FairnessEvent(target: "flood\(index)", sent: DispatchTime.now().uptimeNanoseconds))
                }
                usleep(100)
            }
        }
    }
    try? await Task.sleep(nanoseconds: 200_000_000)
    var taskStarts: [UInt64] = []
    for _ in 0..<samples {
        bus.dispatch(FairnessEvent(target: "single", sent: DispatchTime.now().uptimeNanoseconds))
        let created = DispatchTime.now().uptimeNanoseconds
        let started = await Task.detached { DispatchTime.now().uptimeNanoseconds }.value
        taskStarts.append(started - created)
        try? await Task.sleep(nanoseconds: 20_000_000)
    }
    try? await Task.sleep(nanoseconds: 100_000_000)
    stop.set()
    let waits = await third.waits.sorted()
    let starts = taskStarts.sorted()
    let floodHandled = await flooded[0].handled + flooded[1].handled
    for token in tokens { token.dispose() }
    func ms(_ nanoseconds: UInt64?) -> String { String(format: "%.2f", Double(nanoseconds ?? 0) / 1e6) }
    let goal = max(20_000_000, 2 * (starts.last ?? 0))
    let met = (waits.last ?? .max) <= goal && waits.count == samples
    return """
        Fairness (finding 3): two actors flooded (\(floodHandled) deliveries handled meanwhile) on \
        \(ProcessInfo.processInfo.activeProcessorCount) cores; \(waits.count) of \(samples) single events to a third actor.

        | Wait | p50 (ms) | max (ms) |
        | --- | ---: | ---: |
        | the third actor's single event, dispatch → handler | \(ms(waits[safe: waits.count / 2])) | \(ms(waits.last)) |
        | a plain `Task` start, same run | \(ms(starts[safe: starts.count / 2])) | \(ms(starts.last)) |

        Goal: max ≤ max(20 ms, 2 × the `Task` start's max) = \(ms(goal)) ms: \(met ? "met" : "NOT met").
        """
}

/// A flag set once, read from other threads.
final class Flag: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched holding `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
