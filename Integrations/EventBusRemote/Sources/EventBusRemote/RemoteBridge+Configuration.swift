public import CoreMetrics
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

        /// How long ``RemoteBridge/publish(_:)`` waits for its envelope to be sent, from the moment
        /// it is queued; and how long one ``RemoteTransport/send(_:)`` may take before the bridge
        /// gives up on it. Default 5 s.
        ///
        /// A publish that times out throws ``RemoteBridgeError/publishTimedOut(after:)`` and reports
        /// ``BridgeIssue/publishFailed(wireName:sequence:error:)``: the event **may not have reached
        /// other instances** (if it was still queued it is never sent; if its send was under way it
        /// may still arrive). A send that takes longer is abandoned (its task cancelled), reported
        /// as ``BridgeIssue/sendStalled(after:waiting:)`` (the transport cannot reach its server),
        /// and the next batch is sent.
        public var publishTimeout: Duration = .seconds(5)

        /// Where the bridge's swift-metrics counters go; `nil` (the default):
        /// `MetricsSystem.factory`, the bootstrapped one (no-op until an app bootstraps one).
        ///
        /// | Label (``metricsLabelPrefix`` + ) | Counts | Dimensions |
        /// | --- | --- | --- |
        /// | `published` | envelopes sent by ``RemoteBridge/publish(_:)``, and transactional envelopes made | `mode` (`serial`, `transactional`) |
        /// | `received` | events from other instances dispatched on the bus | none |
        /// | `refused` | envelopes refused or dropped | `reason` (`malformed`, `unauthenticated`, `unknown_wire_name`, `undecodable_payload`, `duplicate`, `older_than_window`, `claims_own_origin`) |
        /// | `missed` | events known missed (``BridgeIssue/missed(origin:count:before:)``'s counts) | none |
        /// | `uncounted_gaps` | gaps of unknown size (``BridgeIssue/missedUncounted(origin:sequence:)``) | none |
        /// | `reconnects` | receiving resumed after an interruption (``BridgeStatus/resumed(gap:)``) | none |
        /// | `publish_failures` | publishes refused or not confirmed | `reason` (`too_large`, `buffer_full`, `failed`) |
        ///
        /// Dimensions take a fixed set of values: wire names, origins and keys never become labels.
        /// Each count is one counter increment, outside the bridge's locks.
        ///
        /// ```swift
        /// var settings = RemoteBridge.Configuration()
        /// settings.metricsFactory = TestMetrics()   // MetricsTestKit, in a test
        /// ```
        public var metricsFactory: (any MetricsFactory)?

        /// The prefix of the counters' labels; default `eventbus.bridge`. Give each bridge of a
        /// process its own to tell their counts apart.
        public var metricsLabelPrefix = "eventbus.bridge"

        /// The defaults.
        ///
        /// ```swift
        /// let settings = RemoteBridge.Configuration()
        /// ```
        public init() {}
    }
}
