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
        /// | `refused` | envelopes refused or dropped | `reason` (`malformed`, `unauthenticated`, `unknown_wire_name`, `undecodable_payload`, `duplicate`, `older_than_window`, `claims_own_origin`, `stale`, `not_from_store`) |
        /// | `missed` | events known missed (``BridgeIssue/missed(origin:count:before:)``'s counts) | none |
        /// | `uncounted_gaps` | gaps of unknown size (``BridgeIssue/missedUncounted(origin:sequence:)``) | none |
        /// | `reconnects` | receiving resumed after an interruption (``BridgeStatus/resumed(gap:)``) | none |
        /// | `held` | a durable consumer stopped before a stored event it cannot decode, unacknowledged (``BridgeIssue/held(consumer:reason:)``) | none |
        /// | `dead_lettered` | a durable consumer's transactional handler failed on an event, moved to the dead letters (``BridgeIssue/deadLettered(consumer:wireName:letter:attempts:reason:)``) | none |
        /// | `publish_failures` | publishes refused or not confirmed | `reason` (`too_large`, `buffer_full`, `failed`) |
        /// | `consumer_lag` (gauge) | a durable consumer's unread events, as its transport last measured them (``RemoteInbox/lag(_:)``, ``RemoteBridge/lag``) | `consumer`; `group`, `partition` for a group's partition |
        /// | `consumer_lag_seconds` (gauge) | the age of that consumer's oldest unread event, 0 when none | the same |
        ///
        /// Dimensions take a fixed set of values: wire names, origins and keys never become labels
        /// (consumer and group names are the app's configuration).
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

        /// How far apart the wall clocks of two instances may be; default 2 s. With a key, an
        /// envelope signed more than this in the receiver's future is refused as stale
        /// (``BridgeIssue/stale(origin:sequence:reason:)``).
        ///
        /// Envelopes (version 3) carry the publisher's wall clock (`Date()`, milliseconds since
        /// 1970) at the moment it made them, under the MAC. With a key, a receiver refuses, as a
        /// stale replay, an envelope it receives live (not from a durable store) that was signed
        /// more than `maximumClockSkew` + ``publishTimeout`` before its current listening period
        /// began (the first ``BridgeStatus/listening`` of a ``RemoteBridge/run()``, or the last
        /// ``BridgeStatus/resumed(gap:)``): it was published while this receiver was not listening,
        /// so at most once it is not this receiver's to get, and a process that never saw it
        /// cannot tell it from a replay otherwise. What remains open: an envelope signed within that
        /// tolerance before the receiver (re)started listening, replayed soon after (7 s by
        /// default), is delivered once more. Keep the instances' clocks synchronised (NTP).
        ///
        /// ```swift
        /// settings.maximumClockSkew = .seconds(1)
        /// ```
        public var maximumClockSkew: Duration = .seconds(2)

        /// The oldest envelope a receiver takes live, by the publisher's clock; default 5 minutes.
        /// With a key, an envelope signed longer ago (plus ``maximumClockSkew``) is refused as stale
        /// (``BridgeIssue/stale(origin:sequence:reason:)``), whatever the receiver remembers of its
        /// origin.
        ///
        /// This bounds a replay to a receiver that has forgotten the origin (more than 256 newer
        /// origins seen), and the duration of a transactional publish: its envelope is signed when
        /// made (``RemoteBridge/transactionalEnvelope(for:)``), so a transaction that commits later
        /// than this has its event refused (reported) by every receiver. Durable transports hand
        /// their stored rows over with ``RemoteInbox/deliverAndWait(_:)``, which checks no age.
        ///
        /// ```swift
        /// settings.maximumEnvelopeAge = .seconds(60)
        /// ```
        public var maximumEnvelopeAge: Duration = .seconds(300)

        /// Whether this bridge reads, and writes, envelope version 2 (the format before signed
        /// freshness and channel-bound MACs); default ``PreviousEnvelopeVersion/refused``.
        ///
        /// See ``PreviousEnvelopeVersion`` for the rolling upgrade from version 2 in three steps.
        ///
        /// ```swift
        /// settings.previousEnvelopeVersion = .published   // step 1 of the upgrade
        /// ```
        public var previousEnvelopeVersion: PreviousEnvelopeVersion = .refused

        /// The defaults.
        ///
        /// ```swift
        /// let settings = RemoteBridge.Configuration()
        /// ```
        public init() {}
    }
}

extension RemoteBridge {
    /// How a bridge treats envelope version 2, the format before version 3's signed timestamp and
    /// channel-bound MAC: the steps of a rolling upgrade, with instances of both versions on one
    /// channel.
    ///
    /// An instance reads its own version and, when allowed, the one before; a newer version is
    /// refused and reported (``BridgeIssue/undecodableNotification(reason:bytes:excerpt:)``, saying
    /// to upgrade). The upgrade from version 2 (an EventBusRemote without
    /// ``Configuration/maximumClockSkew``):
    ///
    /// 1. Deploy the new version with ``published``, one instance at a time: it writes version 2,
    ///    which the old instances read, and reads both.
    /// 2. Once no old instance runs, switch every instance to ``accepted``, one at a time: they
    ///    write version 3, which every instance now reads.
    /// 3. Once every instance writes version 3, switch to ``refused`` (the default): a version 2
    ///    envelope (a replay of one recorded before the upgrade) is refused and reported.
    ///
    /// Version 2 envelopes carry no timestamp and their MAC does not cover the channel: while an
    /// instance reads them, a replay of one to a restarted receiver is not detected (see
    /// ``Configuration/maximumClockSkew``). Durable rows written as version 2 stay readable only
    /// while it is read: drain them (every consumer past them) before step 3.
    ///
    /// ```swift
    /// var settings = RemoteBridge.Configuration()
    /// settings.previousEnvelopeVersion = .accepted   // step 2
    /// ```
    public enum PreviousEnvelopeVersion: Sendable, Equatable {
        /// Write version 2, read versions 2 and 3: step 1, beside instances that read only 2.
        case published
        /// Write version 3, read versions 2 and 3: step 2.
        case accepted
        /// Write and read version 3 only: step 3, and the default.
        case refused
    }
}
