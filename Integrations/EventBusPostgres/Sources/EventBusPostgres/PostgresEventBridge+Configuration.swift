public import Foundation

extension PostgresEventBridge {
    /// The timing, capacity and integrity settings of a bridge; the defaults suit most apps, except
    /// that a key should be set whenever roles you do not trust can `NOTIFY` on the database.
    ///
    /// ```swift
    /// var settings = PostgresEventBridge.Configuration()
    /// settings.heartbeatInterval = .seconds(5)
    /// settings.publishBufferCapacity = 10_000
    /// let cluster = try PostgresEventBridge(
    ///     bus: .shared, listenConfiguration: config, client: client, channel: "app_events",
    ///     configuration: settings)
    /// ```
    public struct Configuration: Sendable {
        /// How often the listening connection sends itself a heartbeat NOTIFY. Default 10 s.
        public var heartbeatInterval: Duration = .seconds(10)

        /// How long a heartbeat may take to come back before the listening connection is declared
        /// dead, closed, reported (``BridgeStatus/interrupted(_:)``) and replaced. Default 5 s. This
        /// bounds how long a silently dead connection (a lost network path) goes unnoticed.
        public var heartbeatTimeout: Duration = .seconds(5)

        /// The delay before the first reconnection attempt; it doubles after each failed attempt,
        /// up to ``maximumReconnectDelay``, and each delay is jittered to between half and all of
        /// its value, so that instances do not reconnect in lockstep. Default 100 ms.
        public var reconnectDelay: Duration = .milliseconds(100)

        /// The longest delay between reconnection attempts: once the server accepts connections
        /// again, the bridge listens again within this delay (plus the time to connect). Default
        /// 500 ms, so that a receiver is back within 1 s of its server; an attempt on a server that
        /// is down costs one refused TCP connection.
        public var maximumReconnectDelay: Duration = .milliseconds(500)

        /// How many publishes may wait for the serial publisher; beyond that ``publish(_:)``
        /// refuses (`RemoteBridgeError.publishBufferFull(capacity:)`). Default 1,024.
        public var publishBufferCapacity = 1024

        /// How long ``PostgresEventBridge/publish(_:)`` waits for its NOTIFY to be sent before it
        /// throws `RemoteBridgeError.publishTimedOut(after:)`: the event may not have reached other
        /// instances; and how long one NOTIFY may take before the publisher is reported stalled
        /// (`BridgeIssue.sendStalled(after:waiting:)`: the client's pool cannot reach the server).
        /// Default 5 s (`RemoteBridge.Configuration.publishTimeout`).
        public var publishTimeout: Duration = .seconds(5)

        /// The key shared by every instance on the channel, to authenticate envelopes with
        /// HMAC-SHA256; `nil` (the default) sends and accepts unauthenticated envelopes, which any
        /// role that can `NOTIFY` on the channel can forge. Use 32 random bytes, the same on every
        /// instance (`RemoteBridge.Configuration.authenticationKey`).
        public var authenticationKey: Data?

        /// The defaults.
        ///
        /// ```swift
        /// let settings = PostgresEventBridge.Configuration()
        /// ```
        public init() {}

        /// The jittered delay before reconnection attempt `attempt` (1, 2, …).
        func delay(beforeAttempt attempt: Int) -> Duration {
            var delay = reconnectDelay
            for _ in 1..<max(1, min(attempt, 40)) where delay < maximumReconnectDelay {
                delay *= 2
            }
            delay = min(delay, maximumReconnectDelay)
            return delay / 2 + delay / 2 * Double.random(in: 0...1)
        }
    }
}
