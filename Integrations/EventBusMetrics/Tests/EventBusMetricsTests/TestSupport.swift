import Dispatch
import Foundation

/// Runs `body` (which may block) on a global dispatch queue, off the cooperative pool.
func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: body()) }
    }
}

/// Polls `condition` every millisecond until it holds or `timeout` passes; returns the seconds it
/// took, `nil` on timeout. Blocks: call it through `offThePool`.
func seconds(until timeout: DispatchTimeInterval, _ condition: () -> Bool) -> Double? {
    let start = DispatchTime.now()
    let deadline = start + timeout
    while DispatchTime.now() < deadline {
        if condition() { return Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9 }
        Thread.sleep(forTimeInterval: 0.001)
    }
    return nil
}
