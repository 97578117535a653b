import Foundation

/// What a receiver knows of each origin's series: the highest sequence accepted and the last
/// `window` sequences (with a digest of each envelope), to drop duplicates, refuse replays older
/// than the window and count gaps. Bounded whatever a forger sends: `window` slots per series, at
/// most `streams` series (the oldest-seen is forgotten first). Every operation is O(1).
struct ReceiveHistory {
    let window: Int
    let streams: Int
    private var series: [Envelope.Stream: Series] = [:]
    /// The series in the order they were first seen, a ring of `streams` entries.
    private var order: [Envelope.Stream] = []
    private var nextEviction = 0

    /// Whether the receiver has missed a period of listening: from then on, a series first seen
    /// with a sequence above 1 may have lost its beginning.
    var hasBeenInterrupted = false

    /// Incremented by ``forgiveGaps()``: a series last admitted under an older value counts no gap
    /// at its next sequence.
    private var generation = 0

    private struct Series {
        var highest: UInt64
        /// Slot `sequence % window` holds that sequence and its digest, for the last `window`.
        var slots: [(sequence: UInt64, digest: UInt64)]
        /// The ``ReceiveHistory/generation`` it was last admitted under.
        var generation: Int
    }

    /// What to do with an authenticated, decoded envelope.
    enum Verdict: Equatable {
        /// Deliver it; it is recorded. `missed` counts the sequences skipped since the last one
        /// of its series (0 when none; `nil` when unknown: a series first seen after an interruption).
        case deliver(missed: UInt64?)
        /// Drop it: its (origin, sequence) was accepted before, with the same envelope
        /// (`sameEnvelope`) or another one (a forgery, or the real one after a forgery).
        case duplicate(sameEnvelope: Bool)
        /// Drop it: older than the window, so a replay (its series is in order).
        case older(highest: UInt64)
    }

    init(window: Int = 256, streams: Int = 256) {
        self.window = max(1, window)
        self.streams = max(1, streams)
    }

    /// Decides about `envelope` and records it when it is delivered.
    mutating func admit(_ envelope: Envelope.Received) -> Verdict {
        let stream = envelope.stream
        let sequence = envelope.sequence
        let slot = Int(sequence % UInt64(window))
        guard let highest = series[stream]?.highest, let held = series[stream]?.slots[slot] else {
            remember(stream)
            var slots = Array(repeating: (sequence: UInt64(0), digest: UInt64(0)), count: window)
            slots[slot] = (sequence, envelope.digest)
            series[stream] = Series(highest: sequence, slots: slots, generation: generation)
            let unknown = !stream.transactional && sequence > 1 && hasBeenInterrupted
            return .deliver(missed: unknown ? nil : 0)
        }
        if held.sequence == sequence { return .duplicate(sameEnvelope: held.digest == envelope.digest) }
        if sequence <= highest && highest - sequence >= UInt64(window) { return .older(highest: highest) }
        let forgiven = series[stream]?.generation != generation
        let missed = !stream.transactional && !forgiven && sequence > highest ? sequence - highest - 1 : 0
        // In place: the slots are not copied.
        series[stream]?.highest = max(highest, sequence)
        series[stream]?.generation = generation
        series[stream]?.slots[slot] = (sequence, envelope.digest)
        return .deliver(missed: missed)
    }

    /// Counts no gap at the next sequence of each series seen so far (duplicates are still
    /// dropped): the events in between were accounted for elsewhere. O(1).
    mutating func forgiveGaps() {
        generation &+= 1
    }

    /// Records that `stream` is tracked, forgetting the oldest-seen series when there are too many.
    private mutating func remember(_ stream: Envelope.Stream) {
        if order.count < streams {
            order.append(stream)
            return
        }
        series[order[nextEviction]] = nil
        order[nextEviction] = stream
        nextEviction = (nextEviction + 1) % streams
    }
}
