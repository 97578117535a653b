import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import NIOConcurrencyHelpers
import Testing

extension PostgresBridgeTests {
    @Suite("Consumer leases: one running bridge per consumer name reads; the others stand by and take over")
    struct ConsumerLeaseTests {
        /// Whether an issue is a `standingBy` report.
        static func isStandingBy(_ issue: BridgeIssue) -> Bool {
            if case .standingBy = issue { true } else { false }
        }

        /// Whether an issue is a `redelivered` report.
        static func isRedelivered(_ issue: BridgeIssue) -> Bool {
            if case .redelivered = issue { true } else { false }
        }

        /// A started durable node of consumer `consumer` on `channel` with Ping registered.
        static func member(_ consumer: String, channel: String) async throws -> ClusterNode {
            let node = try PostgresBridgeTests.durableNode(consumer, channel: channel)
            node.bridge.register(Ping.self, as: "test.ping.v1")
            try await node.start()
            return node
        }

        @Test(
            "two running bridges sharing a consumer name: one delivers, the other stands by (reported once); each event delivered once, not twice"
        )
        func sharedNameDeliversOnce() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.member("publisher", channel: channel)
            let first = try await Self.member("shared", channel: channel)
            let second = try await Self.member("shared", channel: channel)
            let received = [Recorder(Ping.self, on: first.bus), Recorder(Ping.self, on: second.bus)]
            for n in 1...50 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            #expect(await received[0].wait { _ in received[0].events.count + received[1].events.count >= 50 })
            try await Task.sleep(for: .milliseconds(500))  // room for a second delivery
            let counts = received.map(\.events.count)
            #expect(counts.sorted() == [0, 50], "each event once, by one of them: \(counts)")
            let standing = [first, second].map { $0.issues.events.filter(Self.isStandingBy).count }
            #expect(standing.sorted() == [0, 1], "the other reported standing by once: \(standing)")
            for node in [first, second, publisher] { await node.stop() }
        }

        @Test("a clean stop hands the consumer over at once and without redelivery")
        func cleanHandOver() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.member("publisher", channel: channel)
            let holder = try await Self.member("shared", channel: channel)
            let standby = try await Self.member("shared", channel: channel)
            #expect(await standby.issues.wait { $0.contains(where: Self.isStandingBy) })
            let atHolder = Recorder(Ping.self, on: holder.bus)
            let atStandby = Recorder(Ping.self, on: standby.bus)
            for n in 1...100 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            #expect(await atHolder.wait(forCount: 30))
            await holder.stop()  // mid-stream: it finishes and acknowledges its batch, then gives the lease up
            let stopped = ContinuousClock.now
            for n in 101...120 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            #expect(await atStandby.wait { $0.contains(Ping(from: "p", n: 120)) })
            let handOver = ContinuousClock.now - stopped
            try await Task.sleep(for: .milliseconds(300))
            let all = atHolder.events.map(\.n) + atStandby.events.map(\.n)
            #expect(all.sorted() == Array(1...120), "each once across the hand-over")
            #expect(all == Array(1...120), "in order across the hand-over")
            #expect(!standby.issues.events.contains(where: Self.isRedelivered), "\(standby.issues.events)")
            #expect(handOver < .seconds(2), "handed over in \(handOver)")
            print(
                "bridge: clean hand-over of a consumer: \(atHolder.events.count) delivered before the stop, "
                    + "\(atStandby.events.count) after, 0 twice, caught up \(handOver) after the stop")
            for node in [standby, publisher] { await node.stop() }
        }

        @Test(
            "a bridge stopped right after it started (0 to 9 ms) leaves no lease behind: the next bridge of the consumer takes it at once, never standing by"
        )
        func stopRightAfterStartLeavesNoLease() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            var standingBy: [Int] = []
            for round in 0..<10 {
                let first = try await Self.member("shared", channel: channel)
                try await Task.sleep(for: .milliseconds(round))
                await first.stop()
                let next = try await Self.member("shared", channel: channel)
                try await Task.sleep(for: .milliseconds(600))  // a left lease lasts 3 s: standing by at once
                if next.issues.events.contains(where: Self.isStandingBy) { standingBy.append(round) }
                await next.stop()
            }
            #expect(standingBy.isEmpty, "rounds whose next bridge stood by: \(standingBy)")
            print("bridge: 10 bridges stopped 0 to 9 ms after their start; the next stood by in \(standingBy.count)")
        }

        @Test(
            "kill -9 of the lease holder (a ClusterPeer process) mid-batch: the standby takes over within 5 s, its unacknowledged batch redelivered and announced, nothing lost"
        )
        func killedHolderTakenOver() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let publisher = try await Self.member("publisher", channel: channel)
            let holder = try DurableTests.DurableReceiverProcess(
                channel: channel, consumer: "shared", batch: 20, delayMilliseconds: 25)
            #expect(await holder.wait { $0.lines.contains("ready") }, "\(holder.lines)")
            let firstDelivery = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
            let standby = try PostgresBridgeTests.durableNode("shared", channel: channel)
            standby.bridge.register(Ping.self, as: "test.ping.v1")
            let atStandby = Recorder(Ping.self, on: standby.bus) { _ in
                firstDelivery.withLockedValue { $0 = $0 ?? .now }
            }
            try await standby.start()
            #expect(await standby.issues.wait { $0.contains(where: Self.isStandingBy) })
            for n in 1...100 { try await publisher.bridge.publish(Ping(from: "p", n: n)) }
            #expect(await holder.wait { $0.numbers(from: "p").count >= 25 })
            await holder.stop()  // SIGKILL, inside its second batch
            let killed = ContinuousClock.now
            #expect(await atStandby.wait(timeout: .seconds(15)) { $0.contains(Ping(from: "p", n: 100)) })
            try await Task.sleep(for: .milliseconds(300))
            let takeover = try #require(firstDelivery.withLockedValue { $0 }) - killed
            let before = holder.numbers(from: "p")
            let after = atStandby.events.map(\.n)
            let redelivered = standby.issues.events.reduce(0) { sum, issue in
                if case .redelivered(_, let count) = issue { sum + count } else { sum }
            }
            #expect(Set(before).union(after) == Set(1...100), "nothing lost")
            #expect(after == after.sorted() && Set(after).count == after.count)
            let repeated = Set(before).intersection(after).count
            #expect(repeated <= redelivered && redelivered <= 20, "\(repeated) repeated, \(redelivered) announced")
            #expect(takeover <= .seconds(5), "taken over \(takeover) after the kill")
            print(
                "bridge: lease holder killed (kill -9) after \(before.count) of 100: standby delivered its first "
                    + "event \(takeover) after the kill, \(redelivered) redelivered (announced), \(repeated) repeated, 0 lost"
            )
            for node in [standby, publisher] { await node.stop() }
        }
    }
}
