/// A consumer of a durable store: a name, and for a group's member the partition it reads.
///
/// ```swift
/// let plain = DurableConsumerID("mailer")
/// let third = DurableConsumerID(group: "billing", partition: 2, of: 16)   // "billing#2"
/// ```
public struct DurableConsumerID: Hashable, Sendable, CustomStringConvertible {
    /// The cursor's name: the consumer's, or `"<group>#<partition>"`.
    public let name: String
    /// The partition, for a group's cursor.
    public let partition: DurablePartition?

    /// A plain consumer's cursor.
    public init(_ name: String) {
        self.name = name
        partition = nil
    }

    /// The cursor of partition `index` (0 ..< `count`) of `group`, named `"<group>#<index>"`.
    public init(group: String, partition index: Int, of count: Int) {
        name = "\(group)#\(index)"
        partition = DurablePartition(group: group, index: index, count: count)
    }

    /// The cursor's name (``name``).
    ///
    /// ```swift
    /// print(DurableConsumerID(group: "billing", partition: 2, of: 16))   // billing#2
    /// ```
    public var description: String { name }
}
