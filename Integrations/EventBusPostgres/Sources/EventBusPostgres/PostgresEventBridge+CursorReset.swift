public import Foundation

extension PostgresEventBridge {
    /// What ``PostgresEventBridge/resetCursor(of:to:)`` did: where the consumer's cursor was and is,
    /// and how many events that repeats or skips, counted in the reset's transaction.
    ///
    /// ```swift
    /// let reset = try await cluster.resetCursor(of: "billing-worker", to: .time(since))
    /// logger.notice("billing-worker replays \(reset.again) events, skips \(reset.skipped)")
    /// ```
    public struct CursorReset: Sendable, Hashable {
        /// The consumer whose cursor moved.
        public let consumer: String

        /// The point it was reset to.
        public let point: ReplayPoint

        /// The outbox row id of the cursor before the reset (what the consumer had acknowledged;
        /// after earlier resets it has not acknowledged anything since, where it was before them).
        public let previousRowID: Int64

        /// The outbox row id the cursor is now at: the consumer delivers the rows after it, in
        /// `(xid, id)` order (an id that need not exist: the row before the first one it delivers).
        public let rowID: Int64

        /// How many events it had acknowledged that it delivers again (a reset backwards).
        public let again: Int

        /// How many events it had not read that it skips (a reset forwards).
        public let skipped: Int

        /// The bridge (``PostgresEventBridge/leaseOwnerID``) that held the consumer's lease at the
        /// reset, if any: it reads from the new cursor within a third of ``Durable/leaseDuration``;
        /// `nil` when no bridge ran for it (the next one to start does).
        public let holder: UUID?
    }
}
