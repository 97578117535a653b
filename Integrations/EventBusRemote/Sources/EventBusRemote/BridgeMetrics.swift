internal import CoreMetrics

/// A bridge's counters, as swift-metrics counters (see `RemoteBridge.Configuration.metricsFactory`
/// for the labels and dimensions). Each count is one counter increment, outside the bridge's locks.
struct BridgeMetrics: Sendable {
    let serialPublished: Counter
    let transactionalPublished: Counter
    let received: Counter
    let missed: Counter
    let uncountedGaps: Counter
    let reconnects: Counter
    let held: Counter
    /// The consumers' latest lag and its gauges (`RemoteInbox.lag(_:)`).
    let lag: LagBoard
    let deadLettered: Counter
    private let refused: [String: Counter]
    private let publishFailures: [String: Counter]

    static let refusalReasons = [
        "malformed", "unauthenticated", "unknown_wire_name", "undecodable_payload", "duplicate",
        "older_than_window", "claims_own_origin", "stale", "not_from_store",
    ]
    static let publishFailureReasons = ["too_large", "buffer_full", "failed"]

    /// The counters of a bridge, labelled `prefix.…`, made by `factory`.
    init(prefix: String, factory: any MetricsFactory) {
        func counter(_ name: String, _ dimensions: [(String, String)] = []) -> Counter {
            Counter(label: "\(prefix).\(name)", dimensions: dimensions, factory: factory)
        }
        serialPublished = counter("published", [("mode", "serial")])
        transactionalPublished = counter("published", [("mode", "transactional")])
        received = counter("received")
        missed = counter("missed")
        uncountedGaps = counter("uncounted_gaps")
        reconnects = counter("reconnects")
        held = counter("held")
        lag = LagBoard(prefix: prefix, factory: factory)
        deadLettered = counter("dead_lettered")
        refused = Dictionary(
            uniqueKeysWithValues: Self.refusalReasons.map { ($0, counter("refused", [("reason", $0)])) })
        publishFailures = Dictionary(
            uniqueKeysWithValues: Self.publishFailureReasons.map { ($0, counter("publish_failures", [("reason", $0)])) }
        )
    }

    /// Counts what `issue` says was refused, missed or failed.
    func count(_ issue: BridgeIssue) {
        switch issue {
        case .undecodableNotification: refused["malformed"]?.increment()
        case .unauthenticated: refused["unauthenticated"]?.increment()
        case .unknownWireName: refused["unknown_wire_name"]?.increment()
        case .undecodablePayload: refused["undecodable_payload"]?.increment()
        case .duplicateDropped: refused["duplicate"]?.increment()
        case .olderThanWindow: refused["older_than_window"]?.increment()
        case .claimsOwnOrigin: refused["claims_own_origin"]?.increment()
        case .stale: refused["stale"]?.increment()
        case .notFromStore: refused["not_from_store"]?.increment()
        case .missed(_, let count, _): missed.increment(by: Int64(clamping: count))
        case .missedUncounted: uncountedGaps.increment()
        case .held: held.increment()
        case .deadLettered: deadLettered.increment()
        case .payloadTooLarge: publishFailures["too_large"]?.increment()
        case .publishBufferFull: publishFailures["buffer_full"]?.increment()
        case .publishFailed: publishFailures["failed"]?.increment()
        case .sendStalled, .sendRecovered, .redelivered, .expired, .registrationRefused, .standingBy: break
        case .cursorReset, .consumerRemoved: break
        }
    }

    /// Counts a reconnection.
    func count(_ status: BridgeStatus) {
        if case .resumed = status { reconnects.increment() }
    }
}
