/// How long a store keeps events a cursor has not acknowledged: events beyond the newest `count`,
/// and events older than `age`, are deleted (`nil`: no limit of that kind), except those a cursor
/// has claimed and not acknowledged.
///
/// ```swift
/// let deleted = try await store.cleanUp(DurableRetention(count: 100_000, age: .seconds(86_400)))
/// ```
public struct DurableRetention: Sendable, Equatable {
    /// Events beyond the newest `count` are deleted; `nil`: no limit by count.
    public var count: Int?
    /// Events older than `age` are deleted; `nil`: no limit by age.
    public var age: Duration?

    /// A retention of `count` events and `age` (either `nil`: no limit of that kind).
    ///
    /// ```swift
    /// let retention = DurableRetention(count: 1_000_000)
    /// ```
    public init(count: Int? = nil, age: Duration? = nil) {
        self.count = count
        self.age = age
    }
}
