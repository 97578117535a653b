import EventBusRemote
import Foundation
import Logging
import PostgresNIO

/// One channel of the PostgreSQL outbox as a ``DurableStore`` (with scheduled events and dead
/// letters): what the conformance suites (`DurableStoreConformance` and the schedule and dead
/// letter ones, shared with the in-memory store) check; the bridge's scheduler and operations use
/// it too. The bridge itself reads
/// through ``DurableOutbox/reader(on:client:)``, whose cursor is this store's.
///
/// Every call runs on a connection of `client`'s pool, bounded by `statementTimeout`; the tables
/// are made at the first call.
struct PostgresDurableStore: DurableScheduleStore, DurableDeadLetterStore {
    typealias Position = DurableOutbox.Position

    let client: PostgresClient
    /// The channel's statements (schema, appends, schedule, cleanup), with the bridge's settings.
    let base: DurableOutbox

    var channel: String { base.channel }
    var statementTimeout: Duration { base.statementTimeout }
    var logger: Logger { base.logger }

    /// The store of `outbox`'s channel, as the bridge of `outbox` sees it.
    init(outbox: DurableOutbox, client: PostgresClient) {
        self.client = client
        base = outbox
    }

    /// The store of `channel`, with default settings (the conformance suite's).
    init(client: PostgresClient, channel: String, statementTimeout: Duration = .seconds(5), logger: Logger) {
        self.init(
            outbox: DurableOutbox(
                channel: channel, settings: PostgresEventBridge.Durable(consumer: "eventbus-store"),
                statementTimeout: statementTimeout, logger: logger),
            client: client)
    }

    func append(_ envelopes: [String]) async throws {
        try await base.ensureSchema(client)
        try await base.statement { try await client.query(base.insertQuery(envelopes), logger: logger).consume() }
    }

    func cursor(_ consumer: DurableConsumerID, owner: UUID) -> PostgresDurableCursor {
        var settings = PostgresEventBridge.Durable(consumer: consumer.name)
        settings.group = nil
        let partition = consumer.partition.map {
            DurableOutbox.Partition(group: $0.group, index: $0.index, count: $0.count)
        }
        let outbox = DurableOutbox(
            channel: channel, settings: settings, statementTimeout: statementTimeout, logger: logger, member: owner,
            partition: partition)
        return PostgresDurableCursor(outbox: outbox, connection: nil, client: client)
    }

    func cleanUp(_ retention: DurableRetention) async throws -> Int {
        var settings = base.settings
        settings.retentionCount = retention.count
        settings.retentionAge = retention.age
        return try await DurableOutbox(
            channel: channel, settings: settings, statementTimeout: statementTimeout, logger: logger
        ).cleanUp(client)
    }

    // MARK: Scheduled events

    func schedule(_ event: RemoteBridge.PendingEvent, id: UUID, due: DurableDue) async throws {
        try await base.ensureSchema(client)
        let query = base.scheduleQuery(id: id, due: due, pending: event)
        try await base.statement { try await client.query(query, logger: logger).consume() }
    }

    func cancelScheduled(_ id: UUID) async throws -> ScheduledEventCancellation {
        try await base.ensureSchema(client)
        return try await base.statement { try await client.withConnection { try await base.cancel(id, on: $0) } }
    }

    func fireDue(
        lookingAhead: Duration, limit: Int, seal: @escaping @Sendable (DurableDueEvent) throws -> String
    ) async throws -> Int {
        try await base.fire(client, batchSize: limit, offset: lookingAhead, seal: seal)
    }

    // MARK: Dead letters

    func deadLetter(
        _ event: DurableEvent<Position>, of consumer: String, wireName: String, attempts: Int, reason: String
    ) async throws -> Int64 {
        try await base.ensureSchema(client)
        return try await base.statement {
            try await client.withConnection { connection in
                try await base.insertDeadLetter(
                    event, of: consumer, wireName: wireName, attempts: attempts, reason: reason, on: connection)
            }
        }
    }

    func deadLetters(of consumer: String?, after: Int64, limit: Int) async throws -> [DurableDeadLetter] {
        try await base.statement {
            try await base.deadLetters(consumer: consumer, after: after, limit: limit, client: client)
        }
    }

    func requeueDeadLetters(_ id: Int64?, of consumer: String?) async throws -> Int {
        try await base.statement { try await base.requeue(id: id, consumer: consumer, client: client) }
    }
}
