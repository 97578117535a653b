import ClusterSupport
import DurableStoreConformance
import EventBusRemote
import Logging
import PostgresNIO
import Testing

@testable import EventBusPostgres

extension PostgresBridgeTests {
    @Suite(
        "PostgreSQL's durable store passes the conformance suite of every durable store (the checks InMemoryDurableStore passes)"
    )
    struct StoreConformanceTests {
        @Test("conformance check", arguments: DurableStoreConformance<PostgresDurableStore>.checks)
        func check(_ name: String) async throws {
            try await Self.withStores { make in try await DurableStoreConformance(makeStore: make).run(name) }
        }

        @Test("schedule conformance check", arguments: DurableScheduleStoreConformance<PostgresDurableStore>.checks)
        func scheduleCheck(_ name: String) async throws {
            try await Self.withStores { make in try await DurableScheduleStoreConformance(makeStore: make).run(name) }
        }

        @Test(
            "dead letter conformance check", arguments: DurableDeadLetterStoreConformance<PostgresDurableStore>.checks)
        func deadLetterCheck(_ name: String) async throws {
            try await Self.withStores { make in try await DurableDeadLetterStoreConformance(makeStore: make).run(name) }
        }

        /// Runs `body` with a maker of stores, each on a fresh channel of the test database, over
        /// one running client.
        static func withStores(
            _ body: (@escaping @Sendable () async throws -> PostgresDurableStore) async throws -> Void
        ) async throws {
            let client = PostgresClient(configuration: PostgresBridgeTests.url.clientConfiguration())
            let running = Task { await client.run() }
            defer { running.cancel() }
            try await body {
                PostgresDurableStore(
                    client: client, channel: PostgresBridgeTests.uniqueChannel(), logger: Logger(label: "conformance"))
            }
        }
    }
}
