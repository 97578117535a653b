/// One consumer's cursor in a ``DurableStore``: a plain consumer's or a partition's of a group.
///
/// A cursor has one lease at a time (an owner, an epoch that every taking increments, and an end
/// on the store's clock). Every claim and acknowledgement is fenced by the epoch: an owner that
/// lost the lease (it stalled past its end and another took it) moves nothing.
///
/// ```swift
/// let cursor = store.cursor(DurableConsumerID("orders"), owner: me)
/// _ = try await cursor.open()
/// if let epoch = try await cursor.takeLease(for: .seconds(3)) { … }
/// ```
public protocol DurableCursor: Sendable {
    /// A place in the store's order of events.
    associatedtype Position: Comparable & Sendable

    /// Which consumer (or partition) this cursor is.
    var id: DurableConsumerID { get }

    /// The error the store throws when a lease was lost (a fenced acknowledgement or claim).
    var leaseLost: any Error { get }

    /// Creates the cursor after the last readable event if it is new; returns where it stands.
    func open() async throws -> DurableCursorState<Position>

    /// Takes the lease for `duration` if it is free, lapsed or already this owner's; returns its new
    /// epoch, or `nil` while another owner holds it.
    func takeLease(for duration: Duration) async throws -> Int64?

    /// Extends the lease of `epoch` by `duration` from now; `false` if it is no longer this owner's.
    func renewLease(_ epoch: Int64, for duration: Duration) async throws -> Bool

    /// Gives the lease of `epoch` up (`nil`: whichever this owner holds) and wakes the channel's
    /// receivers, so that one standing by takes it at once.
    func releaseLease(_ epoch: Int64?) async throws

    /// Claims the next events after `position` (at most `limit`; a partition's only), fenced by
    /// `epoch`: the claim's end only moves forward. Returns the claimed batch's last position and
    /// how many events it holds, or `nil` when there is nothing to read. A partition's batch that
    /// is not full ends at the last event any partition may read, so that its cursor moves past
    /// the others' events. The claim carries the cursor's expired count (what the next
    /// ``acknowledge(_:claim:epoch:)`` returns). Throws ``leaseLost`` if `epoch` is not held.
    func claim(after position: Position, limit: Int, epoch: Int64) async throws -> DurableClaim<Position>?

    /// The events after `position` through `last`, in order (this cursor's partition's only).
    func read(after position: Position, through last: Position, limit: Int) async throws -> [DurableEvent<Position>]

    /// Moves the cursor to `position`, fenced by `epoch`, updating the claim as `claim` says;
    /// returns how many events retention deleted before this consumer read them since the last
    /// acknowledgement (and resets that count). Throws ``leaseLost`` if `epoch` is not held.
    func acknowledge(_ position: Position, claim: DurableClaimUpdate<Position>, epoch: Int64) async throws -> Int
}
