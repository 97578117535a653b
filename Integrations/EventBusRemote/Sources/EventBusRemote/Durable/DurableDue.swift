public import Foundation

/// When a scheduled event is due.
///
/// ```swift
/// try await store.schedule(pending, id: id, due: .after(.seconds(60)))
/// ```
public enum DurableDue: Sendable, Equatable {
    /// This long after it is stored, by the store's clock.
    case after(Duration)
    /// At this time (compared with the store's clock).
    case at(Date)
}
