import Dispatch

/// Reclaiming the subscriptions whose owner is gone, beyond the sweep every operation pays a
/// share of: a purge, a bounded batch per lock acquisition, and the main queue's pass.
extension BusCore {
    /// Reclaims every subscription whose owner is gone, a bounded batch per lock acquisition.
    /// Owners of main-bound subscriptions are only checked on the main queue: off it, a pass there
    /// is scheduled.
    func purge() {
        let onMain = isOnMainQueue
        var remaining = withRegistry { registry in registry.ownedCount }
        while remaining > 0 {
            let batch = Swift.min(remaining, 256)
            remaining -= batch
            // The owners are checked after unlocking, as the sweep's are (see `AfterUnlock`).
            withRegistry(reserving: batch) { registry in registry.pickForPurge(limit: batch, onMain: onMain) }
            Locked<Registry>.yieldToWaiters()
        }
        if !onMain { scheduleMainSweep(force: true) }
    }

    /// Schedules a purge on the main queue (unless one is scheduled), where main-bound owners may
    /// be checked. `force`: even if the sweep has not skipped a full turn's worth of them yet.
    func scheduleMainSweep(force: Bool = false) {
        let due = force ? withRegistry { registry in registry.mainSweepDue(force: true) } : true
        guard due else { return }
        // Strongly: a weak reference would give the registry a side table, and every retain of it
        // (each subscription holds it) would take the runtime's slow path.
        DispatchQueue.main.async {
            self.withRegistry { registry in registry.mainSweepStarted() }
            self.purge()
        }
    }
}
