public import Foundation

extension PostgresEventBridge {
    /// The lease of a durable consumer, as ``PostgresEventBridge/consumers()`` read it: which running
    /// bridge reads for it, judged by the database's clock.
    ///
    /// The owner is a bridge's ``PostgresEventBridge/leaseOwnerID``; `epoch` counts the takings of
    /// the lease and cursor resets (every claim and acknowledgement of the holder is fenced by it).
    ///
    /// ```swift
    /// switch description.lease {
    /// case .held(let owner, let until, _): print("read by \(owner) until \(until)")
    /// case .lapsed(let owner, _, _): print("\(owner) stopped renewing: it died or stalled")
    /// case .free: print("no bridge reads for it")
    /// }
    /// ```
    public enum ConsumerLease: Sendable, Hashable {
        /// No bridge holds the lease (none ever did, or the last holder stopped cleanly).
        case free(epoch: Int64)

        /// Bridge `owner` holds the lease until `until` (it renews it every third of
        /// ``Durable/leaseDuration``): a live reader.
        case held(by: UUID, until: Date, epoch: Int64)

        /// Bridge `owner` held the lease, which ran out at `at` without being renewed or given up:
        /// its process died or stalled; the next bridge of the consumer takes over.
        case lapsed(by: UUID, at: Date, epoch: Int64)

        /// Whether a bridge holds the lease now (``held(by:until:epoch:)``).
        ///
        /// ```swift
        /// let idle = try await cluster.consumers().filter { !$0.lease.isHeld }
        /// ```
        public var isHeld: Bool {
            if case .held = self { true } else { false }
        }
    }
}
