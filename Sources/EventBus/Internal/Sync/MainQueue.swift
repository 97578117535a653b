import Dispatch
internal import _EventBusShims

/// Whether the caller is running on the main queue, i.e. may touch main-actor state right now.
///
/// On Apple platforms that is the main thread. On Linux, once a process calls `dispatchMain()`
/// (as `swift test` and server runners do), the main thread exits and the main queue is drained by
/// a pool thread, so the thread test alone is not enough: the main queue is also recognised by a
/// queue-specific value the bus sets on it.
var isOnMainQueue: Bool {
    if isMainThread { return true }
    MainQueueMarker.install
    return DispatchQueue.getSpecific(key: MainQueueMarker.key) != nil
}

/// Whether `queue` is the main queue. (Not `queue === .main`: on Linux every `DispatchQueue.main`
/// is a new wrapper of the same queue.)
func isMainQueue(_ queue: DispatchQueue) -> Bool {
    MainQueueMarker.install
    return queue.getSpecific(key: MainQueueMarker.key) != nil
}

private enum MainQueueMarker {
    static let key = DispatchSpecificKey<UInt8>()
    /// Marks the main queue once, the first time anyone asks.
    static let install: Void = DispatchQueue.main.setSpecific(key: key, value: 1)
}

/// Whether the calling thread is the process's main thread (answered by the C shim, which needs the
/// platform's thread API; cheap after the first call on a thread).
var isMainThread: Bool { eventbus_is_main_thread() }
