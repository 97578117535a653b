/// What an acknowledgement does with the cursor's claim.
public enum DurableClaimUpdate<Position: Comparable & Sendable>: Sendable {
    /// Dropped if the acknowledged position reaches it, kept otherwise.
    case keep
    /// Set back to this position (a previous owner's unacknowledged batch, which must stay
    /// claimed) if beyond the acknowledged one, dropped otherwise: the events after a held one are
    /// no longer claimed.
    case releaseTo(Position?)
}
