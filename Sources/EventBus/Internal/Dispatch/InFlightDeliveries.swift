import Dispatch

/// The deliveries a bus enqueued in its queue and actor mailboxes that have not run yet, counted in
/// two generations, so that `EventBusTesting`'s `settle()` waits for those enqueued before it was
/// called, not for a moment with none in flight (which a steady producer never gives it).
///
/// An enqueued delivery is counted in the current generation (its parity, a ticket it keeps) and
/// uncounted when it has run. A wait closes the current generation (new deliveries count in the
/// other one) once the other has drained, then waits for the closed one to drain: every delivery
/// enqueued before the wait began was in one of the two. One wait at a time closes generations
/// (the others wait their turn), so a generation receives deliveries while it is open, and at
/// most those of enqueues that read it just before it was closed. Enqueueing and finishing cost an
/// atomic load and add each; no lock.
final class InFlightDeliveries: Sendable {
    /// Even: generation 0 is open; odd: generation 1. Changed only by the wait that holds `turn`.
    private let generation = AtomicCounter()
    private let counts = (AtomicCounter(), AtomicCounter())
    /// 1 while a wait is closing generations.
    private let turn = AtomicCounter()

    /// Counts a delivery just enqueued; returns its ticket, for ``finished(_:)``.
    func enqueued() -> InFlightTicket {
        let odd = generation.current & 1 == 1
        count(of: odd).add(1)
        return odd ? .odd : .even
    }

    /// Uncounts `count` deliveries that `enqueued()` gave `ticket` (a drain finishes its batch's at
    /// once).
    func finished(_ ticket: InFlightTicket, count finished: Int = 1) {
        guard ticket != .none, finished != 0 else { return }
        count(of: ticket == .odd).add(-finished)
    }

    /// Deliveries enqueued that have not run yet.
    var count: Int { counts.0.current + counts.1.current }

    private func count(of odd: Bool) -> AtomicCounter { odd ? counts.1 : counts.0 }

    /// Waits (polling every millisecond, suspended in between) until every delivery enqueued
    /// before this call has run, or until `deadline` (`DispatchTime.uptimeNanoseconds`) passes;
    /// returns how many of those had not run then, at most (0 when they all had). Throws
    /// `CancellationError` as soon as the calling task is cancelled.
    func waitForThoseEnqueuedBefore(deadline: UInt64?) async throws -> Int {
        // Until the wait closes a generation, later deliveries are counted with the earlier ones:
        // no more than were in flight at the call can be among those still waiting.
        let atCall = count
        func expired() -> Bool { deadline.map { DispatchTime.now().uptimeNanoseconds >= $0 } ?? false }
        // Wait for the turn to close generations.
        while turn.add(1) != 1 {
            turn.add(-1)
            if expired() { return min(count, atCall) }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        defer { turn.add(-1) }
        let open = generation.current & 1 == 1
        // The other generation holds what was enqueued before the last wait closed it (and, at
        // most, what an enqueue that read the generation just before that closing added to it):
        // drained first, since the open one becomes the closed one next and the other the open one.
        while count(of: !open).current > 0 {
            if expired() { return min(count, atCall) }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        generation.add(1)
        while count(of: open).current > 0 {
            if expired() { return count(of: open).current }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        return 0
    }
}
