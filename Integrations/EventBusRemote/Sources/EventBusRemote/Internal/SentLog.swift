/// What this instance sent: the last `capacity` sequences of each of its two series, with a digest
/// of each envelope, so that its echo is told from an envelope that only claims its origin.
struct SentLog {
    let capacity: Int
    /// Slot `sequence % capacity` of each series: serial publishes, transactional ones.
    private var serial: [Entry]
    private var transactional: [Entry]

    private struct Entry {
        var sequence: UInt64 = 0
        var digest: UInt64 = 0
        var echoed = false
    }

    /// What an envelope claiming this instance's origin is.
    enum Echo: Equatable {
        /// This instance sent it and it comes back for the first time.
        case first
        /// This instance sent it and it came back before: a replay.
        case again
        /// This instance did not send it (or sent it more than `capacity` publishes ago).
        case notSent
    }

    init(capacity: Int = 4096) {
        self.capacity = max(1, capacity)
        serial = Array(repeating: Entry(), count: self.capacity)
        transactional = serial
    }

    /// Records a sent envelope. O(1).
    mutating func record(transactional isTransactional: Bool, sequence: UInt64, digest: UInt64) {
        let entry = Entry(sequence: sequence, digest: digest)
        let slot = Int(sequence % UInt64(capacity))
        if isTransactional { transactional[slot] = entry } else { serial[slot] = entry }
    }

    /// Classifies an envelope that claims this instance's origin, and records its echo. O(1).
    mutating func echo(of envelope: Envelope.Received) -> Echo {
        let slot = Int(envelope.sequence % UInt64(capacity))
        let entry = envelope.stream.transactional ? transactional[slot] : serial[slot]
        guard envelope.sequence != 0, entry.sequence == envelope.sequence, entry.digest == envelope.digest else {
            return .notSent
        }
        if entry.echoed { return .again }
        if envelope.stream.transactional { transactional[slot].echoed = true } else { serial[slot].echoed = true }
        return .first
    }
}
