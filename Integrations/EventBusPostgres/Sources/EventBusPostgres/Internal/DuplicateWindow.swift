import Foundation

/// The recently seen (origin, sequence) pairs, to drop duplicates: the last `perOrigin` sequences
/// of each of the last `origins` origins. Bounded, whatever a forger sends.
struct DuplicateWindow {
    let perOrigin: Int
    let origins: Int
    private var seen: [UUID: (set: Set<UInt64>, order: [UInt64], next: Int)] = [:]
    private var originOrder: [UUID] = []

    init(perOrigin: Int = 256, origins: Int = 256) {
        self.perOrigin = perOrigin
        self.origins = origins
    }

    /// Records the pair; returns whether it was already in the window.
    mutating func isDuplicate(origin: UUID, sequence: UInt64) -> Bool {
        if var entry = seen[origin] {
            if entry.set.contains(sequence) { return true }
            if entry.order.count < perOrigin {
                entry.order.append(sequence)
            } else {
                entry.set.remove(entry.order[entry.next])
                entry.order[entry.next] = sequence
                entry.next = (entry.next + 1) % perOrigin
            }
            entry.set.insert(sequence)
            seen[origin] = entry
            return false
        }
        if originOrder.count >= origins {
            seen[originOrder.removeFirst()] = nil
        }
        originOrder.append(origin)
        seen[origin] = ([sequence], [sequence], 0)
        return false
    }
}
