import ClusterSupport
import EventBusPostgres
import Foundation
import Logging
import PostgresNIO
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension PostgresBridgeTests {
    @Suite("Reconnection: interrupted, then resumed, then delivering again")
    struct ReconnectionTests {
        /// Waits until `node` reported `.interrupted` then `.resumed`, and checks that it delivers again.
        static func expectRecovery(
            of node: ClusterNode, from sender: ClusterNode, timeout: Duration = .seconds(30)
        ) async throws {
            let recovered = await node.statuses.wait(timeout: timeout) { statuses in
                guard let interrupted = statuses.firstIndex(where: \.isInterrupted) else { return false }
                return statuses[interrupted...].contains(where: \.isResumed)
            }
            #expect(recovered, "statuses: \(node.statuses.events)")
            let received = Recorder(Ping.self, on: node.bus)
            let marker = Int.random(in: 1...1_000_000)
            // The sender's pool may itself be reconnecting after a restart: retry until it sends.
            let deadline = ContinuousClock.now + timeout
            while true {
                do {
                    try await sender.bridge.publish(Ping(from: sender.name, n: marker))
                    break
                } catch  where ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
            #expect(await received.wait(forCount: 1))
            #expect(received.events.first?.n == marker)
        }

        @Test("pg_terminate_backend of the listening session: .interrupted, then .resumed(gap:), and delivery again")
        func terminateBackend() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let terminated = try await PostgresBridgeTests.withConnection { connection in
                    let rows = try await connection.query(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = \(a.name)",
                        logger: Logger(label: "tests"))
                    var count = 0
                    for try await ok in rows.decode(Bool.self) where ok { count += 1 }
                    return count
                }
                #expect(terminated == 1)
                try await Self.expectRecovery(of: a, from: b)
                #expect(a.statuses.events.filter(\.isInterrupted).count == 1)
                // PostgreSQL's own message, not postgres-nio's generic "prevent accidental leakage" text.
                let interruption = a.statuses.events.first(where: \.isInterrupted)?.description ?? ""
                #expect(interruption.contains("terminating connection due to administrator command"), "\(interruption)")
                #expect(a.statuses.events.first?.isListening == true)
                if case .resumed(let gap) = a.statuses.events.last(where: \.isResumed) {
                    #expect(gap > .zero && gap < .seconds(30))
                }
                #expect(b.statuses.events.count == 1, "b was not disturbed: \(b.statuses.events)")
            }
        }

        @Test("a silently dead listening connection (its backend frozen) misses the heartbeat and is replaced")
        func heartbeatRecyclesAFrozenConnection() async throws {
            var settings = PostgresEventBridge.Configuration()
            settings.heartbeatInterval = .milliseconds(200)
            settings.heartbeatTimeout = .milliseconds(700)
            try await PostgresBridgeTests.withNodes(["a", "b"], configuration: settings) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let pids = try await PostgresBridgeTests.backendPIDs(of: a.name)
                try #require(pids.count == 1)
                // SIGSTOP: the TCP connection stays open, but nothing comes back on it.
                try #require(
                    kill(pids[0], SIGSTOP) == 0, "cannot signal the backend (run the server as this user or as root)")
                defer { _ = kill(pids[0], SIGCONT) }
                let interrupted = await a.statuses.wait(timeout: .seconds(15)) { $0.contains(where: \.isInterrupted) }
                #expect(interrupted)
                if case .interrupted(let error) = a.statuses.events.first(where: \.isInterrupted) {
                    #expect(
                        { if case .heartbeatTimeout = error as? PostgresEventBridgeError { true } else { false } }(),
                        "\(error)")
                }
                try await Self.expectRecovery(of: a, from: b)
            }
        }

        @Test("a server restart: both bridges report .interrupted then .resumed(gap:), and deliver again")
        func serverRestart() async throws {
            try await PostgresBridgeTests.withNodes(["a", "b"]) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                #expect(try await PostgresBridgeTests.serverCommand("EVENTBUS_POSTGRES_RESTART"))
                try await Self.expectRecovery(of: a, from: b)
                try await Self.expectRecovery(of: b, from: a)
            }
        }
    }
}
