import CoreMetrics
import EventBus
import EventBusRemote
import Foundation
import Testing

/// The test traffic: who sent it and its number in the sender's series.
struct Ping: Event, Codable, Equatable {
    let from: String
    let n: Int
}

/// Records what a bus delivers of `E`, and waits for it with a timeout.
final class Recorded<E: Event>: Sendable {
    private let box = Box()
    private let token: EventToken

    /// The recorded events.
    private final class Box: @unchecked Sendable {
        // @unchecked Sendable: `events` is only read or written while `lock` is held.
        let lock = NSLock()
        var events: [E] = []
    }

    init(_ type: E.Type, on bus: EventBus) {
        token = bus.on(type).next { [box] event in
            box.lock.withLock { box.events.append(event) }
        }
    }

    deinit { token.dispose() }

    var events: [E] { box.lock.withLock { box.events } }

    /// Waits until `condition` holds, for 10 s at most; returns whether it holds.
    func wait(until condition: ([E]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition(events) {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return true
    }
}

/// One instance: a fresh bus, a bridge on `network` with Ping registered, running, and what it
/// received and reported.
final class Node: Sendable {
    let name: String
    let bus = EventBus()
    let transport: InMemoryTransport
    let bridge: RemoteBridge
    let pings: Recorded<Ping>
    let issues: Recorded<BridgeIssue>
    let statuses: Recorded<BridgeStatus>
    private let task: Task<Void, any Error>

    init(
        _ name: String, on network: InMemoryNetwork, key: Data? = nil, window: Int = 256,
        metrics: (any MetricsFactory)? = nil, configure: (inout RemoteBridge.Configuration) -> Void = { _ in }
    ) async throws {
        self.name = name
        transport = network.makeTransport()
        var settings = RemoteBridge.Configuration()
        settings.authenticationKey = key
        settings.duplicateWindow = window
        settings.metricsFactory = metrics
        configure(&settings)
        bridge = RemoteBridge(bus: bus, transport: transport, configuration: settings)
        bridge.register(Ping.self, as: "test.ping.v1")
        pings = Recorded(Ping.self, on: bus)
        issues = Recorded(BridgeIssue.self, on: bus)
        statuses = Recorded(BridgeStatus.self, on: bus)
        let bridge = self.bridge
        task = Task { try await bridge.run() }
        let listening = await statuses.wait { $0.contains { if case .listening = $0 { true } else { false } } }
        #expect(listening, "\(name) did not start listening")
    }

    deinit { task.cancel() }

    /// Publishes Ping(from: name, n: n).
    func publish(_ n: Int) async throws {
        try await bridge.publish(Ping(from: name, n: n))
    }

    /// Waits until `node`'s ping `n` has arrived here: everything sent before it has been handled.
    func waitFor(_ node: Node, _ n: Int) async -> Bool {
        await pings.wait { $0.contains(Ping(from: node.name, n: n)) }
    }

    /// The pings received from `node`, by number.
    func numbers(from node: Node) -> [Int] {
        pings.events.filter { $0.from == node.name }.map(\.n)
    }
}

/// An envelope (version 3, made now) as any process could write it (no MAC).
func envelope(origin: UUID, sequence: UInt64, name: String = "test.ping.v1", payload: String) -> String {
    let now = Int64(Date().timeIntervalSince1970 * 1000)
    return #"{"v":3,"o":"\#(origin.uuidString)","s":\#(sequence),"n":"\#(name)","ts":\#(now),"p":\#(payload)}"#
}

/// 32 bytes for a shared key.
func key(_ byte: UInt8) -> Data { Data(repeating: byte, count: 32) }
