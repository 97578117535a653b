import ClusterSupport
import EventBus
import EventBusPostgres
import Foundation
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

extension PostgresBridgeTests {
    @Suite("Lifecycle: one run at a time, a clean close, a bounded publish buffer")
    struct LifecycleTests {
        @Test("stopping closes the dedicated listening connection and reports .stopped; run() twice is refused")
        func cleanClose() async throws {
            let channel = PostgresBridgeTests.uniqueChannel()
            let node = try ClusterNode(name: "\(channel)_a", url: PostgresBridgeTests.url, channel: channel)
            try await node.start()
            #expect(try await PostgresBridgeTests.backendPIDs(of: node.name).count == 1)
            await #expect(throws: RemoteBridgeError.self) { try await node.bridge.run() }
            await node.stop()
            #expect(await node.statuses.wait { $0.last?.isStopped == true })
            // The server forgets the session once the client's Terminate arrives.
            let deadline = ContinuousClock.now + .seconds(10)
            var remaining = try await PostgresBridgeTests.backendPIDs(of: node.name)
            while !remaining.isEmpty && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                remaining = try await PostgresBridgeTests.backendPIDs(of: node.name)
            }
            #expect(remaining.isEmpty)
            #expect(node.statuses.events.map(\.description) == ["listening", "stopped"])
        }

        @Test("over the publish buffer's capacity, publishes are refused and reported; the admitted ones all arrive")
        func bufferOverflow() async throws {
            var settings = PostgresEventBridge.Configuration()
            settings.publishBufferCapacity = 2
            try await PostgresBridgeTests.withNodes(["a", "b"], configuration: settings) { nodes in
                let (a, b) = (nodes[0], nodes[1])
                let remote = Recorder(Ping.self, on: b.bus)
                let local = Recorder(Ping.self, on: a.bus)
                let refused = NIOLockedValueBox(0)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for n in 0..<300 {
                        group.addTask {
                            do {
                                try await a.bridge.publish(Ping(from: "a", n: n))
                            } catch RemoteBridgeError.publishBufferFull(let capacity) {
                                #expect(capacity == 2)
                                refused.withLockedValue { $0 += 1 }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let refusals = refused.withLockedValue { $0 }
                #expect(refusals > 0, "300 concurrent publishes never filled a buffer of 2")
                #expect(await remote.wait(forCount: 300 - refusals))
                #expect(await a.issues.wait(forCount: refusals))
                try await Task.sleep(for: .milliseconds(200))
                #expect(remote.events.count == 300 - refusals)
                #expect(local.events.count == 300 - refusals, "a refused publish is not dispatched locally")
                #expect(
                    a.issues.events.allSatisfy {
                        if case .publishBufferFull("test.ping.v1", 2) = $0 { true } else { false }
                    })
            }
        }

        @Test("a publish of an unregistered type is refused")
        func unregisteredType() async throws {
            struct Unregistered: Event, Codable {}
            try await PostgresBridgeTests.withNodes(["a"]) { nodes in
                await #expect(throws: RemoteBridgeError.self) {
                    try await nodes[0].bridge.publish(Unregistered())
                }
            }
        }
    }
}
