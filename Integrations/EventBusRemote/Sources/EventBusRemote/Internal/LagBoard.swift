import CoreMetrics
import Foundation

/// The latest ``ConsumerLag`` of each consumer a bridge's transport measured, and the two gauges
/// each is recorded in (`consumer_lag`, `consumer_lag_seconds`, with the dimension `consumer` and,
/// for a group's partition, `group` and `partition`: configuration values, a fixed set per process,
/// never event data).
///
/// Gauges are made outside the lock (the metrics factory is the app's code); only the dictionary
/// is read and written under it.
final class LagBoard: Sendable {
    private let prefix: String
    private let factory: any MetricsFactory
    private let entries = Locked<[String: Entry]>([:])

    private struct Entry: Sendable {
        var lag: ConsumerLag
        let unread: Gauge
        let age: Gauge
    }

    init(prefix: String, factory: any MetricsFactory) {
        self.prefix = prefix
        self.factory = factory
    }

    /// Keeps `lag` as its consumer's latest measure and records it in the consumer's gauges.
    func record(_ lag: ConsumerLag) {
        var entry = entries.withLock { $0[lag.consumer] }
        if entry == nil {
            var dimensions = [("consumer", lag.consumer)]
            if let group = lag.group { dimensions.append(("group", group)) }
            if let partition = lag.partition { dimensions.append(("partition", String(partition))) }
            let made = Entry(
                lag: lag,
                unread: Gauge(label: "\(prefix).consumer_lag", dimensions: dimensions, factory: factory),
                age: Gauge(label: "\(prefix).consumer_lag_seconds", dimensions: dimensions, factory: factory))
            entry = entries.withLock { entries in
                // Another thread may have made them meanwhile: keep the first.
                if let existing = entries[lag.consumer] { return existing }
                entries[lag.consumer] = made
                return made
            }
        }
        guard let entry else { return }
        entries.withLock { $0[lag.consumer]?.lag = lag }
        entry.unread.record(lag.unread)
        entry.age.record(lag.oldestUnreadAge.map { $0 / .seconds(1) } ?? 0)
    }

    /// Records `lags`, the measures of the partitions of consumer group `group` that this bridge
    /// holds now, and forgets the group's other partitions (given up since: their gauges go to 0,
    /// this bridge no longer reads them).
    func record(_ lags: [ConsumerLag], ofGroup group: String) {
        for lag in lags { record(lag) }
        let kept = Set(lags.map(\.consumer))
        let gone = entries.withLock { entries in
            let gone = entries.values.filter { $0.lag.group == group && !kept.contains($0.lag.consumer) }
            for entry in gone { entries[entry.lag.consumer] = nil }
            return gone
        }
        for entry in gone {
            entry.unread.record(0)
            entry.age.record(0)
        }
    }

    /// The latest measure of each consumer, by consumer name.
    var all: [ConsumerLag] {
        entries.withLock { $0.values.map(\.lag) }.sorted { $0.consumer < $1.consumer }
    }
}
