public import EventBusRemote

/// The checks every ``DurableStore`` must pass: the semantics ``DurableReader`` relies on, the
/// same for `InMemoryDurableStore` and PostgreSQL's store.
///
/// Each check makes a fresh store with `makeStore` (an empty channel each time), drives its cursors
/// through one behaviour and throws a ``ConformanceFailure`` (naming the failing expectation's file
/// and line) when the store misbehaves: events read back in order after a cursor's creation point,
/// claims (limit, count, fencing by the lease's epoch, only forward), leases (exclusive, renewed,
/// released, lapsed and taken over with the next epoch), acknowledgements and their claim updates,
/// a claimed batch surviving a takeover, cleanup (what all passed, retention by count and by age
/// counted as expired per cursor, never a claimed batch), partitions (their own events, the
/// horizon, their own expired counts), and bridges over ``DurableTransport`` (a consumer stopped
/// and run again gets exactly what it missed; a second bridge of a consumer stands by, then takes
/// over without redelivery). Each takes a second or two at most (leases of 300 to 400 ms where one must
/// lapse).
///
/// A library with no test framework: a store's test target runs each check as a test of its own.
/// The checks run on the calling task; a store's methods are called from it and from the bridges'
/// tasks.
///
/// ```swift
/// import DurableStoreConformance
/// import EventBusRemote
/// import Testing
///
/// @Test(arguments: DurableStoreConformance<InMemoryDurableStore>.checks)
/// func conformance(_ check: String) async throws {
///     try await DurableStoreConformance { InMemoryDurableStore() }.run(check)
/// }
/// ```
public struct DurableStoreConformance<Store: DurableStore>: Sendable {
    /// Makes a fresh store: an empty channel, no cursors.
    public let makeStore: @Sendable () async throws -> Store

    /// A suite over the stores `makeStore` makes (one per check).
    ///
    /// ```swift
    /// let suite = DurableStoreConformance { InMemoryDurableStore() }
    /// ```
    public init(makeStore: @escaping @Sendable () async throws -> Store) {
        self.makeStore = makeStore
    }

    /// The names of the checks, in a fixed order: what ``run(_:)`` takes.
    ///
    /// ```swift
    /// for check in DurableStoreConformance<InMemoryDurableStore>.checks { print(check) }
    /// ```
    public static var checks: [String] { Check.allCases.map(\.rawValue) }

    /// What check `name` verifies, in a sentence (`nil` for an unknown name).
    ///
    /// ```swift
    /// print(DurableStoreConformance<InMemoryDurableStore>.summary(of: "leaseLapse") ?? "")
    /// ```
    public static func summary(of name: String) -> String? {
        Check(rawValue: name)?.summary
    }

    /// Runs check `name` (one of ``checks``) on a fresh store.
    ///
    /// - Throws: A ``ConformanceFailure`` when the store misbehaves (or `name` is not a check);
    ///   what the store throws where it should not.
    ///
    /// ```swift
    /// try await DurableStoreConformance { InMemoryDurableStore() }.run("claimFencedByEpoch")
    /// ```
    public func run(_ name: String) async throws {
        try await runCheck(name, of: Check.self, suite: "DurableStoreConformance") { check in
            try await check.run(on: try await makeStore())
        }
    }

    /// The checks.
    enum Check: String, CaseIterable {
        case readsAfterCreation
        case claimLimitAndCount
        case claimOnlyMovesForward
        case claimFencedByEpoch
        case leaseExclusive
        case leaseLapse
        case acknowledgeMovesCursor
        case acknowledgeReleasesClaim
        case claimSurvivesTakeover
        case cleanUpWhatAllPassed
        case retentionByCount
        case retentionByAge
        case retentionKeepsClaimed
        case partitionReadsItsOwn
        case partitionHorizon
        case partitionExpired
        case bridgeMissesNothing
        case bridgeStandsBy

        var summary: String {
            switch self {
            case .readsAfterCreation:
                "appended events read back in order after the cursor's creation point (not the events before it)"
            case .claimLimitAndCount: "a claim takes at most its limit, says how many, and the read returns them"
            case .claimOnlyMovesForward: "a claim's end only moves forward"
            case .claimFencedByEpoch:
                "claims and acknowledgements with a wrong epoch or owner throw leaseLost, moving nothing"
            case .leaseExclusive:
                "a lease is one owner's; retaken (own, or released) with the next epoch; renewals fenced"
            case .leaseLapse: "a lapsed lease is taken by another owner with the next epoch; the old one is fenced off"
            case .acknowledgeMovesCursor: "an acknowledgement moves the cursor and drops the claim it reaches"
            case .acknowledgeReleasesClaim: "an acknowledgement with releaseTo sets the claim back, or drops it"
            case .claimSurvivesTakeover:
                "an unacknowledged claim is seen by the next owner, which reads the batch again"
            case .cleanUpWhatAllPassed:
                "cleanUp deletes what every cursor passed, nothing else, nothing without cursors"
            case .retentionByCount:
                "retention by count deletes all but the newest, counted as expired per cursor, reported once"
            case .retentionByAge: "retention by age deletes what is older, counted as expired; the larger bound wins"
            case .retentionKeepsClaimed: "retention never deletes a claimed, unacknowledged event"
            case .partitionReadsItsOwn: "a partition's cursor reads only its partition's events, in order"
            case .partitionHorizon: "a partition's batch that is not full ends at the horizon, the last event of any"
            case .partitionExpired: "a partition counts only its own expired events; its horizon claim protects others'"
            case .bridgeMissesNothing:
                "a durable bridge stopped and run again gets exactly the events published meanwhile, none twice"
            case .bridgeStandsBy:
                "a second bridge of a consumer stands by, then takes over a clean stop at once, without redelivery"
            }
        }

        func run(on store: Store) async throws {
            var checks = StoreChecks(store: store)
            switch self {
            case .readsAfterCreation: try await checks.readsAfterCreation()
            case .claimLimitAndCount: try await checks.claimLimitAndCount()
            case .claimOnlyMovesForward: try await checks.claimOnlyMovesForward()
            case .claimFencedByEpoch: try await checks.claimFencedByEpoch()
            case .leaseExclusive: try await checks.leaseExclusive()
            case .leaseLapse: try await checks.leaseLapse()
            case .acknowledgeMovesCursor: try await checks.acknowledgeMovesCursor()
            case .acknowledgeReleasesClaim: try await checks.acknowledgeReleasesClaim()
            case .claimSurvivesTakeover: try await checks.claimSurvivesTakeover()
            case .cleanUpWhatAllPassed: try await checks.cleanUpWhatAllPassed()
            case .retentionByCount: try await checks.retentionByCount()
            case .retentionByAge: try await checks.retentionByAge()
            case .retentionKeepsClaimed: try await checks.retentionKeepsClaimed()
            case .partitionReadsItsOwn: try await checks.partitionReadsItsOwn()
            case .partitionHorizon: try await checks.partitionHorizon()
            case .partitionExpired: try await checks.partitionExpired()
            case .bridgeMissesNothing: try await BridgeChecks(store: store).missesNothing()
            case .bridgeStandsBy: try await BridgeChecks(store: store).standsBy()
            }
        }
    }
}
