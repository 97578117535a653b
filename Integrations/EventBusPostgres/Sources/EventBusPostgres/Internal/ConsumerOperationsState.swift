import NIOConcurrencyHelpers

/// What the operations remember of a running consumer: the highest lease epoch it took, to tell a
/// cursor row that was deleted and made again (its epochs start over) from one that lived on.
final class ConsumerOperationsState: Sendable {
    private let highestEpoch = NIOLockedValueBox<Int64?>(nil)

    /// Records the lease of `epoch` just taken; returns whether a lease this bridge held before
    /// had an epoch at least as high (the row was deleted and made again since).
    func tookEpoch(_ epoch: Int64) -> Bool {
        highestEpoch.withLockedValue { highest in
            defer { highest = epoch }
            return highest.map { $0 >= epoch } ?? false
        }
    }
}
