import ClusterSupport
import EventBus
import EventBusPostgres
import NIOConcurrencyHelpers

/// Each node publishing `Ping(from: its name, n: 1, 2, …)`, one at a time, 2 ms apart, until
/// ``stop()``: `n` is its sequence number. What the tests that kill the server mid-stream check
/// against.
final class PingStream: Sendable {
    /// Per node, the last `n` it tried to publish.
    let attempted: NIOLockedValueBox<[Int]>
    /// Per node, the `n`s whose publish returned (confirmed by the server).
    let succeeded: NIOLockedValueBox<[Set<Int>]>
    private let stopped = NIOLockedValueBox(false)
    private let publishers = NIOLockedValueBox<[Task<Void, Never>]>([])

    init(_ nodes: [ClusterNode]) {
        attempted = NIOLockedValueBox(Array(repeating: 0, count: nodes.count))
        succeeded = NIOLockedValueBox(Array(repeating: [], count: nodes.count))
        let tasks = nodes.enumerated().map { index, node in
            Task { [attempted, succeeded, stopped] in
                var n = 0
                while !stopped.withLockedValue({ $0 }) {
                    n += 1
                    attempted.withLockedValue { $0[index] = n }
                    if (try? await node.bridge.publish(Ping(from: node.name, n: n))) != nil {
                        succeeded.withLockedValue { _ = $0[index].insert(n) }
                    }
                    try? await Task.sleep(for: .milliseconds(2))
                }
            }
        }
        publishers.withLockedValue { $0 = tasks }
    }

    /// Stops the publishers and waits for them.
    func stop() async {
        stopped.withLockedValue { $0 = true }
        for publisher in publishers.withLockedValue({ $0 }) { await publisher.value }
    }
}
