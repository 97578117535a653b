import EventBus
import EventBusRemote
import Foundation
import Testing

/// A transport whose sends never complete (a pool that never gets a connection again), until
/// `release()`: what a publisher that cannot reach its server looks like to the bridge.
final class StalledTransport: RemoteTransport, @unchecked Sendable {
    // @unchecked Sendable: `sends` is only read or written while `lock` is held.
    private let lock = NSLock()
    private var sends = 0
    private let gate = AsyncStream<Void>.makeStream()

    var maximumPayloadBytes: Int { 8_000 }

    /// How many sends were started.
    var sendCount: Int { lock.withLock { sends } }

    func send(_ payloads: [String]) async throws {
        lock.withLock { sends += 1 }
        for await _ in gate.stream {}
    }

    func receive(into inbox: RemoteInbox) async throws {
        inbox.listening()
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(50)) }
    }

    /// Lets every blocked send return.
    func release() { gate.continuation.finish() }
}

@Suite("Publish timeout: a publish that cannot complete says so within the timeout")
struct PublishTimeoutTests {
    /// Runs `body` and returns its result, or nil if it did not return within `limit` (then
    /// leaves it running, cancelled: a publish that ignores cancellation cannot hang the test).
    static func within<T: Sendable>(
        _ limit: Duration, _ body: @escaping @Sendable () async -> T
    ) async -> T? {
        let (outcomes, outcome) = AsyncStream<T?>.makeStream()
        let work = Task { outcome.yield(await body()) }
        let timer = Task {
            try? await Task.sleep(for: limit)
            outcome.yield(nil)
        }
        defer {
            work.cancel()
            timer.cancel()
        }
        for await first in outcomes { return first }
        return nil
    }

    /// A bridge on a fresh bus over a ``StalledTransport``, with Ping registered and `timeout` as
    /// its publish timeout, and a recorder of its issues.
    static func stalledBridge(timeout: Duration) -> (RemoteBridge, StalledTransport, Recorded<BridgeIssue>) {
        let bus = EventBus()
        let transport = StalledTransport()
        var settings = RemoteBridge.Configuration()
        settings.publishTimeout = timeout
        let bridge = RemoteBridge(bus: bus, transport: transport, configuration: settings)
        bridge.register(Ping.self, as: "test.ping.v1")
        return (bridge, transport, Recorded(BridgeIssue.self, on: bus))
    }

    @Test(
        "a send that never completes: publish throws publishTimedOut within the timeout and the send is reported stalled"
    )
    func stalledSend() async throws {
        let (bridge, transport, issues) = Self.stalledBridge(timeout: .milliseconds(300))
        defer { transport.release() }
        // Three publishes: the first is stuck in the transport, the others wait behind it.
        let outcomes = await Self.within(.seconds(5)) {
            await withTaskGroup(of: String.self) { group in
                for n in 1...3 {
                    group.addTask {
                        do {
                            try await bridge.publish(Ping(from: "a", n: n))
                            return "sent"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        let results = try #require(outcomes, "the publishes did not return within 5 s")
        #expect(
            results
                == Array(repeating: RemoteBridgeError.publishTimedOut(after: .milliseconds(300)).description, count: 3))
        #expect(
            await issues.wait { issues in
                issues.filter { if case .publishFailed = $0 { true } else { false } }.count == 3
                    && issues.contains { if case .sendStalled = $0 { true } else { false } }
            }, "\(issues.events)")
        #expect(
            issues.events.allSatisfy {
                $0.description.contains("may not have reached") || $0.description.contains("stalled")
            })
        print(
            "publish timeout: 3 publishes behind a stalled send returned in time; \(transport.sendCount) send(s) started"
        )
    }

    @Test("a publisher that stalled and sends again reports that it recovered, once")
    func recoveryIsReported() async throws {
        let (bridge, transport, issues) = Self.stalledBridge(timeout: .milliseconds(200))
        defer { transport.release() }
        await #expect(throws: RemoteBridgeError.self) { try await bridge.publish(Ping(from: "a", n: 1)) }
        #expect(await issues.wait { $0.contains { if case .sendStalled = $0 { true } else { false } } })
        transport.release()  // the server is reachable again
        try await bridge.publish(Ping(from: "a", n: 2))
        try await bridge.publish(Ping(from: "a", n: 3))
        #expect(await issues.wait { $0.contains { if case .sendRecovered = $0 { true } else { false } } })
        try await Task.sleep(for: .milliseconds(100))
        let recoveries = issues.events.compactMap { issue -> Duration? in
            if case .sendRecovered(let duration) = issue { return duration }
            return nil
        }
        #expect(recoveries.count == 1, "\(issues.events)")
        #expect(recoveries.allSatisfy { $0 >= .milliseconds(0) && $0 < .seconds(5) })
    }
}
