public import Foundation

/// Why an operation of ``InMemoryDurableStore`` (or its cursor) failed.
///
/// Thrown on the calling task; nothing was changed by the operation that threw.
///
/// ```swift
/// do {
///     _ = try await cursor.claim(after: position, limit: 100, epoch: staleEpoch)
/// } catch DurableStoreError.leaseLost(let consumer) {
///     print("\(consumer) is read by another owner now")
/// }
/// ```
public enum DurableStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The lease of `consumer` is not held by this owner with the epoch given: another owner took
    /// it over (this one stalled past its end), it was given up, or the cursor was never opened.
    /// The claim or acknowledgement moved nothing.
    case leaseLost(consumer: String)

    /// A scheduled event with this id exists already (``InMemoryDurableStore/schedule(_:id:due:)``):
    /// nothing was scheduled.
    case scheduledEventExists(UUID)

    /// What went wrong, in words.
    public var description: String {
        switch self {
        case .leaseLost(let consumer):
            "the lease of consumer \(consumer) is held by another owner (or none): nothing moved"
        case .scheduledEventExists(let id):
            "a scheduled event \(id.uuidString) exists already: nothing scheduled"
        }
    }
}
