/// A lease taken (``DurableReader/takeLease(_:waker:)``): its epoch, and whether the same process
/// held the one before it.
public struct DurableLease: Sendable, Equatable {
    /// The lease's epoch, which fences every claim and acknowledgement.
    public let epoch: Int64
    /// Whether this process held the lease just before (it reconnected).
    public let continuing: Bool

    /// A lease of `epoch`; `continuing` if this process held the one before.
    ///
    /// ```swift
    /// let lease = DurableLease(epoch: 4, continuing: false)
    /// ```
    public init(epoch: Int64, continuing: Bool) {
        self.epoch = epoch
        self.continuing = continuing
    }
}
