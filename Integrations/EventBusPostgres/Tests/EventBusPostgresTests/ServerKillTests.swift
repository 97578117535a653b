import ClusterSupport
import EventBusPostgres
import Foundation
import NIOConcurrencyHelpers
import Testing

extension PostgresBridgeTests {
    @Suite("Server killed (kill -9) and restarted: prompt reconnection, reported publishers, counted losses")
    struct ServerKillTests {
        /// Waits until every node reported `.resumed` after an `.interrupted`; returns how long each
        /// took from `start`, or nil for a node that did not within `timeout`.
        static func resumeDelays(
            of nodes: [ClusterNode], since start: ContinuousClock.Instant, timeout: Duration = .seconds(20)
        ) async -> [Duration?] {
            var delays = [Duration?](repeating: nil, count: nodes.count)
            while ContinuousClock.now < start + timeout && delays.contains(where: { $0 == nil }) {
                for (index, node) in nodes.enumerated() where delays[index] == nil {
                    let statuses = node.statuses.events
                    if let interrupted = statuses.firstIndex(where: \.isInterrupted),
                        statuses[interrupted...].contains(where: \.isResumed)
                    {
                        delays[index] = start.duration(to: .now)
                    }
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return delays
        }

        /// `duration` in seconds, with 2 decimals.
        static func seconds(_ duration: Duration) -> String {
            let (seconds, attoseconds) = duration.components
            return String(format: "%.2f s", Double(seconds) + Double(attoseconds) / 1e18)
        }

        /// Everything a node reported, as text: none may be postgres-nio's generic text.
        static func reports(of node: ClusterNode) -> [String] {
            node.statuses.events.map(\.description) + node.issues.events.map(\.description)
        }

        @Test(
            "while the server is down a publish fails within the publish timeout, says why and the stalled publisher is reported; once it is back, receivers listen again within 1 s and publishers send again"
        )
        func killThenStart() async throws {
            var settings = PostgresEventBridge.Configuration()
            settings.publishTimeout = .seconds(1)
            try await PostgresBridgeTests.withNodes(["a", "b"], configuration: settings) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                #expect(try await PostgresBridgeTests.serverCommand("EVENTBUS_POSTGRES_KILL"))
                #expect(await a.statuses.wait(timeout: .seconds(10)) { $0.contains(where: \.isInterrupted) })
                // Every pooled connection of b's client is dead and no new one can be opened.
                let started = ContinuousClock.now
                let outcome: String
                do {
                    try await b.bridge.publish(Ping(from: "b", n: 1))
                    outcome = "sent"
                } catch {
                    outcome = "\(error)"
                }
                let took = started.duration(to: .now)
                #expect(outcome.contains("may not have reached other instances"), "\(outcome)")
                #expect(took < .seconds(3), "publish took \(took)")
                #expect(
                    await b.issues.wait(timeout: .seconds(5)) { issues in
                        issues.contains { if case .publishFailed = $0 { true } else { false } }
                            && issues.contains { if case .sendStalled = $0 { true } else { false } }
                    }, "\(b.issues.events)")
                // Down long enough for a growing backoff to have grown.
                try await Task.sleep(for: .seconds(3))
                #expect(try await PostgresBridgeTests.serverCommand("EVENTBUS_POSTGRES_START"))
                let back = ContinuousClock.now
                let delays = await Self.resumeDelays(of: [a, b], since: back)
                for (node, delay) in zip([a, b], delays) {
                    let delay = try #require(delay, "\(node.name) did not resume: \(node.statuses.events)")
                    #expect(delay < .seconds(1), "\(node.name) listened again \(delay) after the server was back")
                }
                // b's pool reopens a connection: its publishes reach a again, and a's reach b.
                try await ReconnectionTests.expectRecovery(of: a, from: b, timeout: .seconds(10))
                try await ReconnectionTests.expectRecovery(of: b, from: a, timeout: .seconds(10))
                #expect(
                    await b.issues.wait(timeout: .seconds(5)) { issues in
                        issues.contains { if case .sendRecovered = $0 { true } else { false } }
                    }, "b's publisher did not report that it sends again: \(b.issues.events)")
                let figures = delays.compactMap { $0 }.map(Self.seconds)
                print(
                    "bridge: listening again \(figures.joined(separator: " and ")) after the server was back; "
                        + "a publish with the server down failed after \(Self.seconds(took))")
                for node in [a, b] {
                    for report in Self.reports(of: node) {
                        #expect(!report.contains("prevent accidental leakage"), "\(report)")
                    }
                }
            }
        }

        @Test(
            "kill -9 mid-stream, at most once: per origin, delivered + counted missed == published, nothing delivered twice"
        )
        func killMidStream() async throws {
            // Receivers slower to come back than the publishers' pools, so that events are lost.
            var settings = PostgresEventBridge.Configuration()
            settings.reconnectDelay = .seconds(1)
            settings.maximumReconnectDelay = .seconds(1)
            try await PostgresBridgeTests.withNodes(["a", "b"], configuration: settings) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let received = [Recorder(Ping.self, on: a.bus), Recorder(Ping.self, on: b.bus)]
                let stream = PingStream([a, b])
                let published = stream.attempted
                try await Task.sleep(for: .milliseconds(500))
                #expect(try await PostgresBridgeTests.serverCommand("EVENTBUS_POSTGRES_KILL"))
                try await Task.sleep(for: .milliseconds(1500))
                #expect(try await PostgresBridgeTests.serverCommand("EVENTBUS_POSTGRES_START"))
                // Until each receives 20 events the other published after the restart.
                let before = published.withLockedValue { $0 }
                for (index, other) in [(0, 1), (1, 0)] {
                    let from = [a, b][other].name
                    #expect(
                        await received[index].wait(timeout: .seconds(30)) { pings in
                            pings.contains { $0.from == from && $0.n >= before[other] + 20 }
                        })
                }
                await stream.stop()
                // A last event from each, which must arrive: it reveals every gap before it.
                for (index, node) in [a, b].enumerated() {
                    let receiver = received[1 - index]
                    var arrived = false
                    for _ in 1...5 where !arrived {
                        let n = published.withLockedValue { counts in
                            counts[index] += 1
                            return counts[index]
                        }
                        try? await node.bridge.publish(Ping(from: node.name, n: n))
                        arrived = await receiver.wait(timeout: .seconds(2)) { $0.contains(Ping(from: node.name, n: n)) }
                    }
                    #expect(arrived, "\(node.name)'s last event did not arrive")
                }
                let totals = published.withLockedValue { $0 }
                var lines: [String] = []
                for (index, node) in [a, b].enumerated() {
                    let receiver = [b, a][index]
                    let numbers = received[1 - index].events.filter { $0.from == node.name }.map(\.n)
                    let missed = receiver.issues.events.reduce(UInt64(0)) { sum, issue in
                        if case .missed(let origin, let count, _) = issue, origin == node.bridge.origin {
                            return sum + count
                        }
                        return sum
                    }
                    #expect(Set(numbers).count == numbers.count, "\(node.name)'s events delivered twice")
                    #expect(
                        UInt64(numbers.count) + missed == UInt64(totals[index]),
                        "\(node.name): \(numbers.count) delivered + \(missed) missed != \(totals[index]) published")
                    #expect(
                        !receiver.issues.events.contains {
                            if case .missedUncounted(let origin, _) = $0 { origin == node.bridge.origin } else { false }
                        })
                    lines.append(
                        "\(node.name) \(totals[index]) published, \(numbers.count) delivered, \(missed) counted missed")
                    for report in Self.reports(of: receiver) {
                        #expect(!report.contains("prevent accidental leakage"), "\(report)")
                    }
                }
                print("bridge: kill -9 mid-stream: \(lines.joined(separator: "; "))")
            }
        }

        @Test(
            "a publisher whose pooled connections all die (kill -9, 5 times): its pool is made to reconnect, and it sends again within 10 s of the server being back"
        )
        func publisherPoolRecovers() async throws {
            // postgres-nio's pool can keep a lease request waiting with no connection open and none
            // being opened (about 1 kill in 3, without the timeout); the abandoned send cancels that
            // request and the next send's lease opens a connection.
            var recoveries: [Duration] = []
            var stalls = 0
            for _ in 1...5 {
                try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                    let (a, b) = (nodes[0], nodes[1])
                    let received = Recorder(Ping.self, on: b.bus)
                    let stop = NIOLockedValueBox(false)
                    // Four concurrent publishers, so that batches and pooled connections overlap.
                    let publishers = (1...4).map { publisher in
                        Task {
                            var n = 0
                            while !stop.withLockedValue({ $0 }) {
                                n += 1
                                try? await a.bridge.publish(Ping(from: "a\(publisher)", n: n))
                            }
                        }
                    }
                    try await Task.sleep(for: .milliseconds(300))
                    #expect(try await PostgresBridgeTests.serverCommand("EVENTBUS_POSTGRES_KILL"))
                    try await Task.sleep(for: .milliseconds(Int.random(in: 500...3000)))
                    #expect(try await PostgresBridgeTests.serverCommand("EVENTBUS_POSTGRES_START"))
                    let back = ContinuousClock.now
                    let before = received.events.count
                    let recovered = await received.wait(timeout: .seconds(10)) { $0.count > before + 50 }
                    stop.withLockedValue { $0 = true }
                    for publisher in publishers { await publisher.value }
                    #expect(recovered, "a's events did not reach b again; a reported \(a.issues.events)")
                    if recovered { recoveries.append(back.duration(to: .now)) }
                    stalls += a.issues.events.filter { if case .sendStalled = $0 { true } else { false } }.count
                }
            }
            let slowest = recoveries.max().map(Self.seconds) ?? "-"
            print(
                "bridge: publisher after kill -9: \(recoveries.count) of 5 sent again, slowest \(slowest), \(stalls) stalled sends reported"
            )
        }
    }
}
