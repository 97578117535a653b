/// What a ``DurableReader`` remembers of its cursor across reconnections: the lease it holds, the
/// last event it saw handled and the event it holds at (reported once).
///
/// A transport keeps one per cursor for as long as its bridge runs, and gives it to every reader
/// it makes for that cursor (one per connection): a reader that reconnects continues from what it
/// handled (never delivered again) and knows whether it held the lease just before.
///
/// ```swift
/// let remembered = DurableReaderState<Int64>()
/// let reader = DurableReader(cursor: cursor, settings: settings, state: remembered)
/// ```
public final class DurableReaderState<Position: Comparable & Sendable>: Sendable {
    private let state = Locked(State())

    private struct State {
        var handled: Position?
        var heldAt: Position?
        var epoch: Int64?
        var lastEpoch: Int64?
    }

    /// A state with no lease and nothing handled.
    public init() {}

    /// The epoch of the lease held now, if any.
    public var heldEpoch: Int64? { state.withLock { $0.epoch } }

    /// The epoch of the lease held now; `lost` if none (nothing may be claimed or acknowledged
    /// unfenced).
    ///
    /// ```swift
    /// let epoch = try state.epoch(orThrow: cursor.leaseLost)
    /// ```
    public func epoch(orThrow lost: @autoclosure () -> any Error) throws -> Int64 {
        guard let epoch = heldEpoch else { throw lost() }
        return epoch
    }

    /// The last event handled by this process, if any.
    public var handled: Position? { state.withLock { $0.handled } }

    /// The event this process holds at (reported already), if any.
    public var heldAt: Position? { state.withLock { $0.heldAt } }

    /// Records the event this process holds at and reported (`nil`: it holds no more).
    public func recordHeld(_ position: Position?) {
        state.withLock { $0.heldAt = position }
    }

    /// Records `position` as handled by this process.
    public func recordHandled(_ position: Position) {
        state.withLock { $0.handled = position }
    }

    /// Records the lease held (`nil`: none).
    public func setEpoch(_ epoch: Int64?) {
        state.withLock { $0.epoch = epoch }
    }

    /// Records that the lease of `epoch` is no longer held (`nil`: whichever is), unless a newer
    /// one was taken meanwhile (a group member may take a partition again while its reader gives
    /// the old lease up).
    public func endEpoch(_ epoch: Int64?) {
        state.withLock { state in
            if epoch == nil || state.epoch == epoch { state.epoch = nil }
        }
    }

    /// Records the lease just taken; returns whether this process held the one before it (nobody
    /// else read for the cursor in between).
    public func tookLease(_ epoch: Int64) -> Bool {
        state.withLock { state in
            defer {
                state.epoch = epoch
                state.lastEpoch = epoch
            }
            return state.lastEpoch == epoch - 1
        }
    }
}
