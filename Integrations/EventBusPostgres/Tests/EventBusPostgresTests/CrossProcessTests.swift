import ClusterSupport
import EventBusPostgres
import Foundation
import NIOConcurrencyHelpers
import Testing

extension PostgresBridgeTests {
    @Suite("Across processes: a second process (ClusterPeer) on the same channel")
    struct CrossProcessTests {
        /// The ClusterPeer executable, built beside this test bundle (or named by EVENTBUS_CLUSTER_PEER).
        static func peerExecutable() throws -> URL {
            if let path = ProcessInfo.processInfo.environment["EVENTBUS_CLUSTER_PEER"] {
                return URL(fileURLWithPath: path)
            }
            let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            var directory = bundle.deletingLastPathComponent()
            // On macOS the test binary sits inside the .xctest bundle.
            while directory.path != "/"
                && !FileManager.default.fileExists(atPath: directory.appendingPathComponent("ClusterPeer").path)
            {
                directory = directory.deletingLastPathComponent()
            }
            let peer = directory.appendingPathComponent("ClusterPeer")
            try #require(
                FileManager.default.isExecutableFile(atPath: peer.path),
                "ClusterPeer is not built next to \(bundle.path): run swift build --build-tests first")
            return peer
        }

        @Test("200 events from another process, 100 to it: each exactly once, in order, both ways, no echo")
        func secondProcess() async throws {
            try await PostgresBridgeTests.withNodes(["local"]) { nodes in
                let local = nodes[0]
                let received = Recorder(Ping.self, on: local.bus)
                let output = NIOLockedValueBox("")
                let pipe = Pipe()
                pipe.fileHandleForReading.readabilityHandler = { handle in
                    let text = String(decoding: handle.availableData, as: UTF8.self)
                    output.withLockedValue { $0 += text }
                }
                let peer = Process()
                peer.executableURL = try Self.peerExecutable()
                var environment = ProcessInfo.processInfo.environment
                environment["PEER_CHANNEL"] = local.bridge.channel
                environment["PEER_NAME"] = "peer"
                environment["PEER_SEND"] = "200"
                environment["PEER_EXPECT"] = "100"
                peer.environment = environment
                peer.standardOutput = pipe
                try peer.run()
                defer { if peer.isRunning { peer.terminate() } }

                let deadline = ContinuousClock.now + .seconds(60)
                while !output.withLockedValue({ $0.contains("ready\n") }) {
                    try #require(
                        peer.isRunning && ContinuousClock.now < deadline, "peer: \(output.withLockedValue { $0 })")
                    try await Task.sleep(for: .milliseconds(20))
                }
                for n in 0..<100 { try await local.bridge.publish(Ping(from: "local", n: n)) }
                #expect(await received.wait(timeout: .seconds(60)) { $0.filter { $0.from == "peer" }.count >= 200 })
                while peer.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
                #expect(!peer.isRunning)
                #expect(peer.terminationStatus == 0, "peer: \(output.withLockedValue { $0 })")
                pipe.fileHandleForReading.readabilityHandler = nil
                #expect(output.withLockedValue { $0 }.contains("peer: received 100 in order, once each"))
                try await Task.sleep(for: .milliseconds(200))
                let fromPeer = received.events.filter { $0.from == "peer" }.map(\.n)
                let own = received.events.filter { $0.from == "local" }.map(\.n)
                #expect(fromPeer.count == 200)
                #expect(fromPeer == Array(0..<200) ? true : false, "the peer's events out of order or twice")
                #expect(own.count == 100, "own events once each (local dispatch), no echo")
            }
        }
    }
}
