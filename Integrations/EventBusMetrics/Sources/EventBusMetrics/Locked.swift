import Foundation

/// A value behind an `NSLock`.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched in `withLock`, holding `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
