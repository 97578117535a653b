public import Foundation

extension RemoteBridge {
    /// The integrity, capacity and duplicate-window settings of a bridge; the defaults suit most
    /// apps, except that a key should be set whenever the channel is not trusted.
    ///
    /// ```swift
    /// var settings = RemoteBridge.Configuration()
    /// settings.authenticationKey = Data(base64Encoded: secrets.clusterKey)
    /// settings.publishBufferCapacity = 10_000
    /// ```
    public struct Configuration: Sendable {
        /// The key shared by every instance on the channel, to authenticate envelopes with
        /// HMAC-SHA256; `nil` (the default) sends and accepts unauthenticated envelopes.
        ///
        /// With a key, a bridge signs every envelope it sends and refuses every envelope without a
        /// valid MAC (``BridgeIssue/unauthenticated(reason:bytes:excerpt:)``), before recording
        /// anything, so only holders of the key can publish or suppress events. Use 32 random
        /// bytes, the same on every instance; instances with different keys do not hear each
        /// other. The MAC does not hide the events: anyone who can listen on the channel reads them.
        public var authenticationKey: Data?

        /// How many publishes may wait for the serial publisher; beyond that
        /// ``RemoteBridge/publish(_:)`` refuses (``RemoteBridgeError/publishBufferFull(capacity:)``).
        /// Default 1,024.
        public var publishBufferCapacity = 1024

        /// How many of each origin's latest sequence numbers a receiver remembers, to drop
        /// duplicates; an envelope older than that is refused as a replay
        /// (``BridgeIssue/olderThanWindow(origin:sequence:latest:)``). Default 256.
        public var duplicateWindow = 256

        /// The defaults.
        ///
        /// ```swift
        /// let settings = RemoteBridge.Configuration()
        /// ```
        public init() {}
    }
}
