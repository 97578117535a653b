/// A partition of a consumer group: the events whose ordering key's hash is ``index`` modulo
/// ``count``.
public struct DurablePartition: Hashable, Sendable {
    /// The group's name.
    public let group: String
    /// This partition, `0 ..< count`.
    public let index: Int
    /// The group's number of partitions.
    public let count: Int

    /// Whether an event of ordering hash `hash` belongs to this partition.
    ///
    /// ```swift
    /// DurablePartition(group: "g", index: 1, count: 4).contains(hash: 9)   // true
    /// ```
    public func contains(hash: Int32) -> Bool {
        Int(hash) % count == index
    }

    /// Partition `index` of the `count` of `group`.
    ///
    /// ```swift
    /// let third = DurablePartition(group: "billing", index: 2, count: 16)
    /// ```
    public init(group: String, index: Int, count: Int) {
        self.group = group
        self.index = index
        self.count = count
    }
}
