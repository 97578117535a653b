import Dispatch
import Testing

@testable import EventBus

/// Sticky replay against concurrent sticky dispatches (the race greenrobot #50 had): a subscriber
/// that joins while events are being dispatched gets every event from the one it joined at, each
/// exactly once — replayed or live, never both, never neither — and, when queued, in order.
@Suite("Reliability: sticky replay vs concurrent dispatch", .tags(.stress), .offThePool)
struct StickyReplayOracleTests {
    struct Tick: Event {
        let serial: Int
        let room: String
        var eventType: String { room }
    }

    @Test(
        "Subscribers joining during sticky dispatches on 2 keys: no duplicate, no gap, per-key order (queued)",
        arguments: [false, true])
    func replayOracle(queued: Bool) {
        let rooms = ["a", "b"]
        let perRoom = 3_000
        let joiners = 16
        let bus = EventBus()
        let logs = (0..<joiners).map { _ in Shared<[String: [Int]]>([:]) }
        let queues = (0..<joiners).map { DispatchQueue(label: "sticky.oracle.\($0)") }
        let tokens = Shared<[EventToken]>([])
        let finished = concurrently(rooms.count + joiners, timeout: .seconds(60)) { worker in
            if worker < rooms.count {
                let room = rooms[worker]
                for serial in 1...perRoom { bus.dispatch(Tick(serial: serial, room: room), sticky: .latest) }
            } else {
                let joiner = worker - rooms.count
                usleepMilliseconds(joiner % 8)
                let log = logs[joiner]
                let maker = bus.on(Tick.self).replayingSticky()
                let record: @Sendable (Tick) -> Void = { tick in
                    log.withLock { $0[tick.room, default: []].append(tick.serial) }
                }
                let token = queued ? maker.atQueue(queues[joiner]).next(record) : maker.next(record)
                tokens.withLock { $0.append(token) }
            }
        }
        #expect(finished)
        for queue in queues { #expect(drain(queue)) }
        var joinedMidway = 0
        for (joiner, log) in logs.enumerated() {
            for room in rooms {
                let serials = log.value[room] ?? []
                guard let first = serials.min() else {
                    Issue.record("joiner \(joiner) got nothing for room \(room) (the last event is always kept)")
                    continue
                }
                if first > 1 && first < perRoom { joinedMidway += 1 }
                #expect(Set(serials).count == serials.count, "joiner \(joiner), room \(room): a duplicate")
                #expect(serials.count == perRoom - first + 1, "joiner \(joiner), room \(room): a gap after \(first)")
                if queued { #expect(serials == Array(first...perRoom), "joiner \(joiner), room \(room): out of order") }
            }
        }
        print(
            "sticky replay oracle (\(queued ? "queued" : "synchronous")): \(rooms.count) keys × \(perRoom) sticky dispatches, "
                + "\(joiners) replaying subscribers joined concurrently (\(joinedMidway) key streams joined midway), "
                + "0 duplicates, 0 gaps")
        withExtendedLifetime(tokens) {}
    }
}
