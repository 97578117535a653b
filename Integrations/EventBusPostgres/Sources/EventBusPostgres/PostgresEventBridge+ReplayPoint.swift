public import Foundation

extension PostgresEventBridge {
    /// Where ``PostgresEventBridge/resetCursor(of:to:)`` puts a durable consumer's cursor: the
    /// first event it delivers next.
    ///
    /// The outbox is read in `(xid, id)` order (the order in which the publishing transactions
    /// first wrote; see the README's "Order, and the outbox trap"), so a point is a place in that
    /// order: the consumer gets the first row at the point and every row after it.
    ///
    /// ```swift
    /// try await cluster.resetCursor(of: "billing-worker", to: .time(Date() - 3_600))   // the last hour again
    /// try await cluster.resetCursor(of: "search-indexer", to: .end)                      // skip the backlog
    /// ```
    public enum ReplayPoint: Sendable, Hashable, CustomStringConvertible {
        /// The oldest event the outbox still keeps (retention deleted anything older): the whole
        /// retained history again.
        case beginning

        /// The first event stored (`created_at`, the database's clock at its INSERT) at or after
        /// `date`, and everything after it in delivery order: every event stored at or after
        /// `date`, plus the few stored just before it by transactions that committed after it. A
        /// date later than the last event: as ``end``.
        case time(Date)

        /// Outbox row `id` (`eventbus_outbox.id`, as ``ConsumerDescription/cursorRowID`` or a
        /// `held` report shows it), and everything after it in delivery order. A row the channel
        /// does not have (never, or deleted) is refused:
        /// ``PostgresEventBridgeError/unknownOutboxRow(_:)``.
        case row(Int64)

        /// After the last committed event that no running transaction can precede, as a new
        /// consumer starts: the backlog is skipped, events committed from now on are delivered.
        case end

        /// The point in words, as the consumer's announcement
        /// (`BridgeIssue.cursorReset(consumer:to:again:skipped:)`) carries it.
        ///
        /// ```swift
        /// print(PostgresEventBridge.ReplayPoint.row(42))   // "outbox row 42"
        /// ```
        public var description: String {
            switch self {
            case .beginning: return "the beginning of the retained events"
            case .time(let date): return "the events stored from \(ISO8601DateFormatter().string(from: date))"
            case .row(let id): return "outbox row \(id)"
            case .end: return "the end (the backlog skipped)"
            }
        }
    }
}
