public import Foundation

extension PostgresEventBridge {
    /// The timing, capacity and integrity settings of a bridge; the defaults suit most apps, except
    /// that a key should be set whenever roles you do not trust can `NOTIFY` on the database.
    ///
    /// ```swift
    /// var settings = PostgresEventBridge.Configuration()
    /// settings.heartbeatInterval = .seconds(5)
    /// settings.publishBufferCapacity = 10_000
    /// let cluster = try PostgresEventBridge(
    ///     bus: .shared, listenConfiguration: config, client: client, channel: "app_events",
    ///     configuration: settings)
    /// ```
    public struct Configuration: Sendable {
        /// How often the listening connection sends itself a heartbeat NOTIFY. Default 10 s.
        public var heartbeatInterval: Duration = .seconds(10)

        /// How long a heartbeat may take to come back before the listening connection is declared
        /// dead, closed, reported (``BridgeStatus/interrupted(_:)``) and replaced. Default 5 s. This
        /// bounds how long a silently dead connection (a lost network path) goes unnoticed.
        public var heartbeatTimeout: Duration = .seconds(5)

        /// The delay before the first reconnection attempt; it doubles after each failed attempt,
        /// up to ``maximumReconnectDelay``, and each delay is jittered to between half and all of
        /// its value, so that instances do not reconnect in lockstep. Default 100 ms.
        public var reconnectDelay: Duration = .milliseconds(100)

        /// The longest delay between reconnection attempts: once the server accepts connections
        /// again, the bridge listens again within this delay (plus the time to connect). Default
        /// 500 ms, so that a receiver is back within 1 s of its server; an attempt on a server that
        /// is down costs one refused TCP connection.
        public var maximumReconnectDelay: Duration = .milliseconds(500)

        /// How many publishes may wait for the serial publisher; beyond that ``publish(_:)``
        /// refuses (`RemoteBridgeError.publishBufferFull(capacity:)`). Default 1,024.
        public var publishBufferCapacity = 1024

        /// How long ``PostgresEventBridge/publish(_:)`` waits for its NOTIFY to be sent before it
        /// throws `RemoteBridgeError.publishTimedOut(after:)`: the event may not have reached other
        /// instances; and how long one NOTIFY may take before the publisher is reported stalled
        /// (`BridgeIssue.sendStalled(after:waiting:)`: the client's pool cannot reach the server).
        /// Default 5 s (`RemoteBridge.Configuration.publishTimeout`).
        public var publishTimeout: Duration = .seconds(5)

        /// The key shared by every instance on the channel, to authenticate envelopes with
        /// HMAC-SHA256; `nil` (the default) sends and accepts unauthenticated envelopes, which any
        /// role that can `NOTIFY` on the channel can forge. Use 32 random bytes, the same on every
        /// instance (`RemoteBridge.Configuration.authenticationKey`).
        public var authenticationKey: Data?

        /// With a key, how far apart the instances' wall clocks may be; default 2 s
        /// (`RemoteBridge.Configuration.maximumClockSkew`, which says what it refuses).
        ///
        /// At most once, a signed envelope NOTIFYed again to a receiver that began listening more
        /// than this plus ``publishTimeout`` after it was signed (a restarted instance, typically) is
        /// refused as a stale replay (`BridgeIssue.stale(origin:sequence:reason:)`). Durable
        /// receivers take events only from the outbox, so no clock is involved there.
        ///
        /// ```swift
        /// settings.maximumClockSkew = .seconds(1)
        /// ```
        public var maximumClockSkew: Duration = .seconds(2)

        /// With a key, the oldest envelope a receiver takes from a NOTIFY, by its publisher's clock;
        /// default 5 minutes (`RemoteBridge.Configuration.maximumEnvelopeAge`). It also bounds a
        /// transaction that publishes at most once: its envelope is signed at `publish(_:in:)`,
        /// delivered at COMMIT.
        ///
        /// ```swift
        /// settings.maximumEnvelopeAge = .seconds(60)
        /// ```
        public var maximumEnvelopeAge: Duration = .seconds(300)

        /// Whether the bridge reads and writes envelope version 2, the format before version 3
        /// (signed timestamps, channel-bound MACs): the steps of a rolling upgrade; default
        /// `.refused` (`RemoteBridge.PreviousEnvelopeVersion` describes the three steps).
        ///
        /// ```swift
        /// settings.previousEnvelopeVersion = .published   // step 1: old instances still run
        /// ```
        public var previousEnvelopeVersion: RemoteBridge.PreviousEnvelopeVersion = .refused

        /// How events reach the other instances: ``Delivery/atMostOnce`` (the default: a NOTIFY
        /// each, nothing stored) or ``Delivery/durable(_:)`` (an outbox table and a cursor per
        /// consumer). Every instance on a channel must use the same kind.
        public var delivery: Delivery = .atMostOnce

        /// The defaults.
        ///
        /// ```swift
        /// let settings = PostgresEventBridge.Configuration()
        /// ```
        public init() {}

        /// The jittered delay before reconnection attempt `attempt` (1, 2, …).
        func delay(beforeAttempt attempt: Int) -> Duration {
            var delay = reconnectDelay
            for _ in 1..<max(1, min(attempt, 40)) where delay < maximumReconnectDelay {
                delay *= 2
            }
            delay = min(delay, maximumReconnectDelay)
            return delay / 2 + delay / 2 * Double.random(in: 0...1)
        }
    }
}

extension PostgresEventBridge {
    /// How a bridge's events reach the other instances.
    ///
    /// ```swift
    /// var settings = PostgresEventBridge.Configuration()
    /// settings.delivery = .durable(.init(consumer: "billing-worker-1"))
    /// ```
    public enum Delivery: Sendable {
        /// Each event is a NOTIFY, nothing is stored: a receiver that is not listening misses it
        /// (counted, reported). One statement per batch of publishes. The default.
        case atMostOnce

        /// Each event is a row of the outbox table (`eventbus_outbox`), written in the publisher's
        /// transaction; NOTIFY only wakes receivers, which read the rows in order after a cursor
        /// kept per consumer name (`eventbus_cursors`), so nothing is missed across outages and
        /// restarts. See the package README for the exact guarantee and the schema.
        case durable(Durable)
    }

    /// The settings of ``Delivery/durable(_:)``.
    ///
    /// ```swift
    /// var durable = PostgresEventBridge.Durable(consumer: "billing-worker-1")
    /// durable.retentionAge = .seconds(3 * 86_400)
    /// settings.delivery = .durable(durable)
    /// ```
    public struct Durable: Sendable {
        /// The name this instance's cursor is kept under: stable across restarts (a restarted
        /// instance resumes after the last event its predecessor handled). One running bridge per
        /// name reads at a time (the lease: ``leaseDuration``); others of the same name stand by
        /// (to share the work instead, make them a ``group``). 1 to 200 bytes. For a group member,
        /// the group's name.
        public var consumer: String

        /// How many rows a receiver reads, hands to the bus and acknowledges at once. Default 500.
        public var batchSize = 500

        /// How often a receiver reads the outbox without being woken: the safety net for a lost
        /// wake-up, and the longest an event waits behind a transaction that was open when it was
        /// committed (see the README). Default 1 s.
        public var pollInterval: Duration = .seconds(1)

        /// Rows older than this (by insert time) are deleted even if a consumer has not read them
        /// (it then reports `BridgeIssue.expired(consumer:count:)`); `nil` for no age limit.
        /// Default 7 days.
        public var retentionAge: Duration? = .seconds(7 * 86_400)

        /// At most this many rows of the channel are kept; older ones are deleted even if a
        /// consumer has not read them (as for ``retentionAge``); `nil` for no limit. Default
        /// 1,000,000.
        public var retentionCount: Int? = 1_000_000

        /// How long a consumer's lease lasts without renewal, on the database's clock. One running
        /// bridge per consumer name holds the lease and reads; it renews it every third of this,
        /// apart from its handlers, and every acknowledgement is fenced by it. Another bridge of the
        /// same consumer stands by (reported once: `BridgeIssue.standingBy(consumer:)`) and takes
        /// over when the holder stops (at once: a clean stop gives the lease up after acknowledging
        /// its batch) or dies (`kill -9`: within this plus a third of it, its unacknowledged batch
        /// then redelivered, announced). Default 3 s: a takeover within 4 s.
        ///
        /// ```swift
        /// durable.leaseDuration = .seconds(6)   // a database that can stall longer
        /// ```
        public var leaseDuration: Duration = .seconds(3)

        /// How often the bridge that reads for the consumer measures its lag (the unread rows after
        /// its cursor, counted up to 100,000, and the age of the oldest), on a connection of the
        /// client's pool: read it with ``PostgresEventBridge/lag`` or the gauges `consumer_lag` and
        /// `consumer_lag_seconds` (`RemoteBridge.Configuration.metricsFactory`). Each measure is an
        /// index range scan over at most 100,000 rows (a caught-up consumer: one index probe).
        /// `nil` measures nothing. Default 5 s.
        ///
        /// ```swift
        /// durable.lagInterval = .seconds(15)
        /// ```
        public var lagInterval: Duration? = .seconds(5)

        /// How often a running bridge deletes the rows every consumer has passed and those beyond
        /// the retention limits, in short transactions of at most 1,000 rows each. Default 30 s.
        public var cleanupInterval: Duration = .seconds(30)

        /// How this bridge fires scheduled events (``PostgresEventBridge/publish(_:after:)``):
        /// whether, how often, how many per transaction. Every running durable bridge fires by
        /// default; several firing on one channel share the work (each row fires once).
        ///
        /// ```swift
        /// durable.scheduling.pollInterval = .milliseconds(250)
        /// ```
        public var scheduling = Scheduling()

        /// The consumer group this bridge is a member of (``init(group:partitions:)``), or `nil`
        /// (the default): a single consumer, read by one running bridge at a time.
        ///
        /// ```swift
        /// durable.group = PostgresEventBridge.ConsumerGroup(name: "billing", partitions: 16)
        /// ```
        public var group: ConsumerGroup? {
            didSet { if let group { consumer = group.name } }
        }

        /// How this consumer's transactional handlers (``PostgresEventBridge/process(_:_:)``) are
        /// run: tries before a dead letter, the backoff, the cap on a transaction's duration, the
        /// handler's timeout. Unused by a consumer without such handlers.
        ///
        /// ```swift
        /// durable.processing.maximumTransactionDuration = .milliseconds(500)
        /// ```
        public var processing = Processing()

        /// Durable delivery for consumer `consumer`, with the defaults.
        ///
        /// ```swift
        /// let durable = PostgresEventBridge.Durable(consumer: "billing-worker-1")
        /// ```
        public init(consumer: String) {
            self.consumer = consumer
        }

        /// Durable delivery as a member of consumer group `group`, split into `partitions`
        /// partitions (``ConsumerGroup``): every bridge started with the same group shares its
        /// events, each handled by one member, in order per key. ``consumer`` is the group's name.
        ///
        /// ```swift
        /// settings.delivery = .durable(.init(group: "billing", partitions: 16))
        /// ```
        public init(group: String, partitions: Int = 16) {
            consumer = group
            self.group = ConsumerGroup(name: group, partitions: partitions)
        }
    }
}

extension PostgresEventBridge {
    /// The settings of a durable bridge's firer of scheduled events (``Durable/scheduling``): it
    /// moves the due rows of `eventbus_schedule` into the outbox while the bridge runs.
    ///
    /// An event scheduled for a time fires at most ``pollInterval`` plus the time to fire one batch
    /// (``batchSize`` rows) after that time by the database's clock, as long as one bridge of the
    /// channel runs with ``firesEvents``; earlier never.
    ///
    /// ```swift
    /// var durable = PostgresEventBridge.Durable(consumer: "billing-worker-1")
    /// durable.scheduling.pollInterval = .milliseconds(250)
    /// durable.scheduling.batchSize = 200
    /// ```
    public struct Scheduling: Sendable {
        /// Whether ``PostgresEventBridge/run()`` fires the channel's due events. Default `true`;
        /// turn it off on instances that should only schedule (at least one must fire).
        public var firesEvents = true

        /// How often the firer looks for due events when the last look found less than a batch.
        /// The bound on lateness, with one batch's firing time. Default 1 s.
        public var pollInterval: Duration = .seconds(1)

        /// How many due events one transaction fires at most. Default 500.
        public var batchSize = 500

        /// Added to the database's clock when the firer decides what is due: `.zero` (the default)
        /// in production. Tests and drills set it to fire events ahead of time without waiting
        /// (`.seconds(3600)` fires, now, what is due within the hour).
        public var clockOffset: Duration = .zero

        /// How long a fired, cancelled or refused row is kept (so that ``PostgresEventBridge/cancel(_:)``
        /// can say what became of it) before the outbox's cleanup deletes it. Default 7 days.
        public var retention: Duration = .seconds(7 * 86_400)

        /// The defaults.
        ///
        /// ```swift
        /// let scheduling = PostgresEventBridge.Scheduling()
        /// ```
        public init() {}
    }
}
