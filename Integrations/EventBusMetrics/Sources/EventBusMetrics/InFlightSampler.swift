import Dispatch

/// Calls a tick every interval on a utility-QoS global queue, until the tick returns `false` or the
/// sampler is deinitialized: what keeps ``EventBusMetrics``' `enqueued_in_flight` gauge live.
///
/// The timer is a `DispatchSourceTimer`, kept behind a lock only to be cancelled once; the tick
/// runs on the timer's queue with no lock held. It holds the sampler weakly, so the sampler's owner
/// decides how long it runs.
final class InFlightSampler: Sendable {
    private let interval: DispatchTimeInterval
    private let timer = Locked<(any DispatchSourceTimer)?>(nil)

    init(interval: DispatchTimeInterval) {
        self.interval = interval
    }

    /// Starts calling `tick` every interval, the first time one interval from now; stops for good
    /// the first time it returns `false`.
    func start(_ tick: @escaping @Sendable () -> Bool) {
        let source = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        source.schedule(deadline: .now() + interval, repeating: interval)
        source.setEventHandler { [weak self] in
            if !tick() { self?.stop() }
        }
        timer.withLock { $0 = source }
        source.activate()
    }

    /// Cancels the timer (once; later calls do nothing). No tick starts after this returns; one
    /// running on the timer's queue finishes.
    func stop() {
        timer.withLock { timer in
            defer { timer = nil }
            return timer
        }?.cancel()
    }

    deinit { stop() }
}
