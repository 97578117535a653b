// The floor under the at-most-once bridge: postgres-nio alone, no bridge. One connection LISTENs,
// another sends `SELECT pg_notify($1, $2)` and awaits it before the next, as a sequential
// publisher of the bridge does; the latency runs from just before the statement to the moment the
// listening task takes the notification from its sequence.
import ClusterSupport
import Dispatch
import EventBus
import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// A bare LISTEN/NOTIFY round trip with postgres-nio: two dedicated connections on one channel.
///
/// With `busHop`, the listener does what the bridge does with a received event before its
/// handlers run and nothing else: `EventBus.dispatchOnBusQueue(_:)`, the latency read in the
/// handler on the bus queue. The difference between the two floors is that hop's cost.
final class BareNotify: Sendable {
    private let listener: PostgresConnection
    private let notifier: PostgresConnection
    private let channel: String
    private let listening: Task<Void, any Error>
    private let arrivals: NIOLockedValueBox<[UInt64]>
    /// A notification's send time, dispatched on the bus queue with `busHop`.
    private struct Sent: Event { let at: UInt64 }
    private static let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })

    private init(
        listener: PostgresConnection, notifier: PostgresConnection, channel: String,
        listening: Task<Void, any Error>, arrivals: NIOLockedValueBox<[UInt64]>
    ) {
        self.listener = listener
        self.notifier = notifier
        self.channel = channel
        self.listening = listening
        self.arrivals = arrivals
    }

    /// Opens both connections and returns once the listener listens on a channel of its own;
    /// `busHop`: dispatches each arrival on a bus's queue and reads the clock there.
    static func open(_ url: DatabaseURL, busHop: Bool = false) async throws -> BareNotify {
        let channel = benchmarkChannel()
        let listener = try await PostgresConnection.connect(
            configuration: url.connectionConfiguration(applicationName: "\(channel)_listener"), id: 1, logger: logger)
        let notifier = try await PostgresConnection.connect(
            configuration: url.connectionConfiguration(applicationName: "\(channel)_notifier"), id: 2, logger: logger)
        let arrivals = NIOLockedValueBox<[UInt64]>([])
        let bus = EventBus()
        let token = bus.on(Sent.self).next { sent in
            let now = DispatchTime.now().uptimeNanoseconds
            arrivals.withLockedValue { $0.append(now - sent.at) }
        }
        let (ready, readiness) = AsyncStream<Void>.makeStream()
        let listening = Task {
            defer { readiness.finish() }
            try await listener.listen(on: channel) { notifications in
                readiness.finish()
                for try await notification in notifications {
                    let now = DispatchTime.now().uptimeNanoseconds
                    let sentAt = UInt64(notification.payload.prefix { $0 != "|" }) ?? now
                    if busHop {
                        bus.dispatchOnBusQueue(Sent(at: sentAt))
                    } else {
                        arrivals.withLockedValue { $0.append(now - sentAt) }
                    }
                }
            }
            token.dispose()
        }
        for await _ in ready {}
        return BareNotify(
            listener: listener, notifier: notifier, channel: channel, listening: listening, arrivals: arrivals)
    }

    /// Sends `count` notifications of `bytes` bytes, each awaited before the next, and waits for
    /// them all to arrive (2 minutes at most, else exits); returns their latencies and how long
    /// each statement took, in nanoseconds.
    func roundTrips(count: Int, bytes: Int) async throws -> (latencies: [UInt64], statements: [UInt64]) {
        let start = arrivals.withLockedValue { $0.count }
        var statements: [UInt64] = []
        for _ in 0..<count {
            let sentAt = DispatchTime.now().uptimeNanoseconds
            let prefix = String(sentAt) + "|"
            let payload = prefix + String(repeating: "x", count: max(0, bytes - prefix.utf8.count))
            try await notifier.query("SELECT pg_notify(\(channel), \(payload))", logger: Self.logger).consume()
            statements.append(DispatchTime.now().uptimeNanoseconds - sentAt)
        }
        let deadline = ContinuousClock.now + .seconds(120)
        while arrivals.withLockedValue({ $0.count }) < start + count {
            if ContinuousClock.now >= deadline {
                print("bare LISTEN/NOTIFY: only \(arrivals.withLockedValue { $0.count } - start) of \(count) arrived")
                exit(1)
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        return (arrivals.withLockedValue { Array($0[start..<(start + count)]) }, statements)
    }

    /// Closes both connections.
    func close() async {
        listening.cancel()
        try? await listener.close()
        _ = await listening.result
        try? await notifier.close()
    }
}

extension PostgresRowSequence {
    /// Reads the rows to the end, so that the statement has completed.
    func consume() async throws {
        for try await _ in self {}
    }
}
