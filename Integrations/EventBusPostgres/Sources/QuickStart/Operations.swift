import EventBus
import EventBusPostgres
import Foundation

/// An operator's look at the channel's consumers: who is behind, by how much, who reads for whom.
func reportConsumers(of cluster: PostgresEventBridge) async throws {
    for consumer in try await cluster.consumers() {  // exact: scans each consumer's unread rows
        let age = consumer.oldestUnreadAge.map { "\($0)" } ?? "-"
        logger.info("\(consumer.name): \(consumer.unread) unread, oldest \(age), lease \(consumer.lease)")
    }
    // This bridge's own consumer, measured every `Durable.lagInterval` (also the gauges
    // `consumer_lag` and `consumer_lag_seconds`): no query.
    for lag in cluster.lag where lag.unread > 10_000 {
        logger.warning("behind: \(lag)")
    }
}

/// A consumer that is gone for good: retention no longer waits for it.
func retire(_ consumer: String, on cluster: PostgresEventBridge) async throws {
    switch try await cluster.removeConsumer(consumer) {
    case .removed: logger.info("\(consumer) removed")
    case .leased(let owner, let until): logger.warning("\(owner) reads for \(consumer) until \(until): stop it first")
    case .removedWhileLeased, .unknown: break
    }
}

/// Replays the last hour to a consumer whose handlers had a bug, and skips another's backlog.
/// Safe while their bridges run: each reads from its new cursor within a third of its lease, and
/// announces it first (`BridgeIssue.cursorReset`).
func replayLastHour(on cluster: PostgresEventBridge) async throws {
    let replay = try await cluster.resetCursor(of: "billing-worker-1", to: .time(Date() - 3_600))
    logger.notice("billing-worker-1 gets \(replay.again) events again")
    let skip = try await cluster.resetCursor(of: "search-indexer", to: .end)
    logger.notice("search-indexer skips \(skip.skipped) events")
}
