import Testing

@testable import EventBus  // `IncrementalMap`, internal

/// The map behind a bucket's keys and a bag's tokens, without a bus or a
/// thread: it agrees with a `Dictionary`, shrinks after a peak, and resizes a bounded number of
/// entries per operation.
@Suite("IncrementalMap: a hash map that resizes a few entries per operation", .offThePool)
struct IncrementalMapTests {
    typealias Map = IncrementalMap<String, Int>

    /// Applies 400,000 random insertions and removals, rising to ~50,000 keys then falling back to
    /// a handful, and checks the map against a `Dictionary` as it goes.
    @Test(
        "random insertions and removals up to a peak and back agree with a Dictionary; each operation moves at most 8 entries"
    )
    func agreesWithDictionary() {
        var map = Map()
        var model: [String: Int] = [:]
        var random = SplitMix64(seed: 29)
        var largestStep = 0
        var peakCapacity = 0
        let operations = 400_000
        for step in 0..<operations {
            let rising = step < operations / 2
            let key = "key-\(random.next(below: rising ? 80_000 : 100_000))"
            let moved = map.movedEntries
            // Rising: mostly insertions; falling: removals, of keys that are in the map.
            if rising ? random.next(below: 4) != 0 : random.next(below: 8) == 0 {
                let value = random.next(below: 1_000)
                map.value(forKey: key, default: 0).pointee = value
                model[key] = value
            } else if let existing = rising ? key : model.keys.first {
                #expect(map.index(forKey: existing).map { map.remove(at: $0) } == model.removeValue(forKey: existing))
            }
            _ = map.takeSpentTable()
            largestStep = max(largestStep, map.movedEntries - moved)
            peakCapacity = max(peakCapacity, map.capacity)
            if step % 10_007 == 0 {
                #expect(map.count == model.count)
                for (key, value) in model.prefix(200) { #expect(map.index(forKey: key)?.value.pointee == value) }
            }
        }
        #expect(map.count == model.count)
        var seen = 0
        map.forEachValue { _ in seen += 1 }
        #expect(seen == model.count)
        for (key, value) in model { #expect(map.index(forKey: key)?.value.pointee == value) }
        #expect(map.index(forKey: "absent") == nil)
        #expect(largestStep <= Map.stepEntries, "one operation moved \(largestStep) entries")
        print(
            "IncrementalMap: \(operations) random operations: peak \(peakCapacity) slots, "
                + "\(map.capacity) slots for \(map.count) keys at the end, at most \(largestStep) entries moved by one")
    }

    @Test(
        "100,000 keys removed down to 1: the table is back to the minimum within a bounded number of further operations"
    )
    func shrinksAfterPeak() {
        var map = Map()
        let keys = 100_000
        for i in 0..<keys { map.value(forKey: "k\(i)", default: i).pointee = i }
        let peak = map.capacity
        for i in 1..<keys {
            let index = map.index(forKey: "k\(i)")!
            #expect(map.remove(at: index) == i)
            _ = map.takeSpentTable()
        }
        #expect(map.index(forKey: "k0")?.value.pointee == 0)
        // Each further operation takes a step (the largest table's empty slots are looked at 64 at a time).
        var further = 0
        while map.capacity > Map.minimumCapacity && further < peak / Map.stepSlots {
            map.value(forKey: "k0", default: 0).pointee = 0
            _ = map.takeSpentTable()
            further += 1
        }
        #expect(
            map.capacity == Map.minimumCapacity, "\(map.capacity) slots for 1 key after \(further) further operations")
        #expect(map.count == 1)
        print(
            "IncrementalMap: \(keys) keys removed down to 1: \(peak) slots at the peak, \(map.capacity) after \(further) further operations"
        )
    }
}
