// Internal hooks that tests reach through `@testable import EventBus`. Not API: keep them few, and
// keep them here, so that a rewrite of the core knows what the tests expect of it.

extension EventBus {
    /// The number of event types that have per-type state in the bus's index (a bucket), hooked
    /// types included. Tests check that it does not grow with types that no longer have
    /// subscribers (issue 9, defect 5).
    var _bucketCountForTesting: Int { registry.bucketCount() }
}
