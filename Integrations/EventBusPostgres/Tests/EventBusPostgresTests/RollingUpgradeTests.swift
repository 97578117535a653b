import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import Logging
import PostgresNIO
import Testing

/// Version 1 of "test.order", as instances before the upgrade have it.
struct OrderV1: Event, Codable, Equatable {
    let id: Int
}

/// Version 2 of "test.order": a field was added.
struct Order: Event, Codable, Equatable {
    let id: Int
    let carrier: String
}

extension PostgresBridgeTests {
    @Suite("Rolling upgrades: event versions through the deploy protocol, no undecodable row acknowledged")
    struct RollingUpgradeTests {
        /// The event version an instance runs with: before the upgrade, upgraded but still publishing
        /// version 1 (step 1), upgraded and publishing version 2 (step 2).
        enum Stage: String {
            case old, reading, writing
        }

        /// Durable settings with a short poll, so a held row is tried again quickly.
        static var settings: PostgresEventBridge.Configuration {
            var durable = PostgresEventBridge.Durable(consumer: "unset")
            durable.pollInterval = .milliseconds(200)
            var settings = PostgresEventBridge.Configuration()
            settings.delivery = .durable(durable)
            return settings
        }

        /// Registers "test.order" on `node` as `stage` has it.
        static func register(_ stage: Stage, on node: ClusterNode) {
            switch stage {
            case .old:
                node.bridge.register(OrderV1.self, as: "test.order")
            case .reading, .writing:
                let fromV1 = RemoteBridge.Upcaster<Order>.from(
                    OrderV1.self, version: 1, upcast: { Order(id: $0.id, carrier: "unknown") },
                    downcast: { OrderV1(id: $0.id) })
                node.bridge.register(
                    Order.self, as: "test.order", version: 2, upcasting: [fromV1],
                    publishing: stage == .reading ? 1 : 2)
            }
        }

        /// One incarnation of an instance: a started durable node of consumer `name` at `stage`,
        /// recording the order ids it receives (of either shape) into `received`.
        final class Instance: Sendable {
            let node: ClusterNode
            let stage: Stage
            private let recorders: (Recorder<OrderV1>, Recorder<Order>)

            init(_ name: String, _ stage: Stage, channel: String) async throws {
                node = try PostgresBridgeTests.durableNode(
                    name, channel: channel, configuration: RollingUpgradeTests.settings)
                self.stage = stage
                RollingUpgradeTests.register(stage, on: node)
                recorders = (Recorder(OrderV1.self, on: node.bus), Recorder(Order.self, on: node.bus))
                try await node.start()
            }

            /// The ids received, in order (only one of the two recorders sees events).
            var ids: [Int] { recorders.0.events.map(\.id) + recorders.1.events.map(\.id) }
            var orders: [Order] { recorders.1.events }

            func publish(_ id: Int) async throws {
                switch stage {
                case .old: try await node.bridge.publish(OrderV1(id: id))
                case .reading, .writing: try await node.bridge.publish(Order(id: id, carrier: "ups"))
                }
            }

            func waitFor(_ ids: Set<Int>) async -> Bool {
                await node.issues.wait(timeout: .seconds(15)) { _ in ids.isSubset(of: Set(self.ids)) }
            }
        }

        /// The position of consumer `consumer`'s cursor (its row id) and whether it holds a claim.
        static func cursor(_ consumer: String, channel: String) async throws -> (id: Int64, claimed: Bool) {
            try await PostgresBridgeTests.withConnection { connection in
                var cursor: (Int64, Bool) = (-1, true)
                let rows = try await connection.query(
                    """
                    SELECT id, claimed_id IS NOT NULL FROM eventbus_cursors
                    WHERE channel = \(channel) AND consumer = \(consumer)
                    """, logger: Logger(label: "tests"))
                for try await row in rows.decode((Int64, Bool).self) { cursor = row }
                return cursor
            }
        }

        /// The outbox row ids of `channel`, in `(xid, id)` order.
        static func rowIDs(channel: String) async throws -> [Int64] {
            try await PostgresBridgeTests.withConnection { connection in
                var ids: [Int64] = []
                let rows = try await connection.query(
                    "SELECT id FROM eventbus_outbox WHERE channel = \(channel) ORDER BY xid, id",
                    logger: Logger(label: "tests"))
                for try await id in rows.decode(Int64.self) { ids.append(id) }
                return ids
            }
        }

        @Test(
            "a durable consumer never acknowledges a row it cannot decode: it holds before it, releases its claim, reports it once; the upgraded consumer delivers it and the rest, once, in order"
        )
        func neverAcknowledgesUndecodable() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let old = try await Instance("consumer", .old, channel: channel)
            let oldPublisher = try await Instance("old-publisher", .old, channel: channel)
            // Breaks the deploy protocol on purpose: publishes version 2 while an old instance runs.
            let newPublisher = try await Instance("new-publisher", .writing, channel: channel)
            try await oldPublisher.publish(1)
            try await newPublisher.publish(2)
            try await oldPublisher.publish(3)
            #expect(await old.node.issues.wait(timeout: .seconds(10)) { $0.contains { $0.isHeld } })
            try await Task.sleep(for: .milliseconds(800))  // four polls: read, held, tried again
            #expect(old.ids == [1], "delivered past the row it cannot decode: \(old.ids)")
            let held = old.node.issues.events.filter(\.isHeld)
            #expect(held.count == 1, "reported once: \(old.node.issues.events)")
            #expect("\(held)".contains(#"version 2 of "test.order" is newer"#), "\(held)")
            // Stopped (each retry claims the row again and releases it; a stop ends after the release).
            await old.node.stop()
            let rows = try await Self.rowIDs(channel: channel)
            #expect(rows.count == 3)
            let cursor = try await Self.cursor("consumer", channel: channel)
            #expect(cursor.id == rows.first, "the cursor is at the row before the held one: \(cursor), rows \(rows)")
            #expect(!cursor.claimed, "the claim is released")

            // The same consumer, upgraded: the held row and the one after it, each once, in order.
            let upgraded = try await Instance("consumer", .reading, channel: channel)
            #expect(await upgraded.waitFor([2, 3]))
            try await Task.sleep(for: .milliseconds(400))
            #expect(upgraded.orders == [Order(id: 2, carrier: "ups"), Order(id: 3, carrier: "unknown")])
            #expect(
                upgraded.node.issues.events.isEmpty, "no redelivery, no expiry, no hold: \(upgraded.node.issues.events)"
            )
            let after = try await Self.cursor("consumer", channel: channel)
            #expect(after.id == rows.last && !after.claimed, "\(after)")
            for instance in [upgraded, oldPublisher, newPublisher] { await instance.node.stop() }
        }

        @Test(
            "v1 and v2 registrations on two instances through the deploy protocol (publish version 1 until both read 2): 0 undecodable, 0 silently dropped"
        )
        func deployProtocol() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            var published: [String: [Int]] = ["a": [], "b": []]
            var received: [String: [Int]] = ["a": [], "b": []]
            var issues: [BridgeIssue] = []
            var next = 0
            var running = [
                "a": try await Instance("a", .old, channel: channel),
                "b": try await Instance("b", .old, channel: channel),
            ]
            /// Both publish `count` events each.
            func publish(_ count: Int) async throws {
                for _ in 0..<count {
                    for name in ["a", "b"] {
                        next += 1
                        try await running[name]!.publish(next)
                        published[name]!.append(next)
                    }
                }
            }
            /// Replaces `name` by an incarnation at `stage` (stopped, then started: a deploy).
            func deploy(_ name: String, _ stage: Stage) async throws {
                let current = running[name]!
                let other = name == "a" ? "b" : "a"
                // What it had received by the time it stops (the rest is read by the next one).
                await current.node.stop()
                received[name]! += current.ids.filter { published[other]!.contains($0) }
                issues += current.node.issues.events
                running[name] = try await Instance(name, stage, channel: channel)
            }
            try await publish(10)
            try await deploy("b", .reading)  // step 1: one instance at a time
            try await publish(10)
            try await deploy("a", .reading)
            try await publish(10)
            try await deploy("b", .writing)  // step 2: every instance reads version 2
            try await publish(10)
            try await deploy("a", .writing)
            try await publish(10)
            for (name, instance) in running {
                let other = name == "a" ? "b" : "a"
                let expected = Set(published[other]!)
                let alreadyReceived = Set(received[name]!)
                #expect(
                    await instance.waitFor(expected.subtracting(alreadyReceived)), "\(name) did not receive everything")
            }
            try await Task.sleep(for: .milliseconds(400))
            for (name, instance) in running {
                let other = name == "a" ? "b" : "a"
                received[name]! += instance.ids.filter { published[other]!.contains($0) }
                issues += instance.node.issues.events
                await instance.node.stop()
            }
            for name in ["a", "b"] {
                let other = name == "a" ? "b" : "a"
                #expect(received[name]!.sorted() == published[other]!, "\(name): each of \(other)'s events once")
                #expect(received[name]! == received[name]!.sorted(), "\(name): in order")
            }
            #expect(issues.isEmpty, "no undecodable, held, expired, redelivered or missed event: \(issues)")
            print(
                "bridge: rolling upgrade, 2 instances, 4 deploys, \(next) events published, "
                    + "\(received["a"]!.count + received["b"]!.count) received across instances, \(issues.count) issues"
            )
        }

        @Test(
            "the schema migrates itself: on a database from before scheduled events, four upgraded instances starting at once create the table, and events flow"
        )
        func schemaMigration() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            try await PostgresBridgeTests.withConnection { connection in
                try await connection.query("DROP TABLE IF EXISTS eventbus_schedule", logger: Logger(label: "tests"))
                    .consume()
            }
            // Each runs the migrations as it starts, under the advisory lock.
            let instances = try await withThrowingTaskGroup(of: Instance.self) { group in
                for index in 0..<4 { group.addTask { try await Instance("n\(index)", .reading, channel: channel) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let publisher = try await Instance("publisher", .old, channel: channel)
            try await publisher.publish(1)
            _ = try await publisher.node.bridge.publish(OrderV1(id: 2), after: .zero)
            for instance in instances {
                #expect(await instance.waitFor([1, 2]))
                #expect(instance.orders == [Order(id: 1, carrier: "unknown"), Order(id: 2, carrier: "unknown")])
                #expect(instance.node.issues.events.isEmpty, "\(instance.node.issues.events)")
            }
            for instance in instances + [publisher] { await instance.node.stop() }
        }
    }
}

extension BridgeIssue {
    var isHeld: Bool { if case .held = self { true } else { false } }
}
