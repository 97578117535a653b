extension PostgresEventBridge {
    /// A consumer group: bridges that share the work of one durable consumer, each event handled by
    /// one member, the events of one ordering key in order (``Durable/init(group:partitions:)``).
    ///
    /// The channel's events are split into ``partitions`` partitions by a hash of their ordering
    /// key: the event's key (`Event.eventType`) when it has one, otherwise the bridge that published
    /// it (`RemoteBridge.orderingKey(ofEnvelope:)`). Each partition is a cursor of its own, leased
    /// to one member at a time on the database's clock; the members share the partitions evenly
    /// (at most `ceil(partitions / members)` each) and hand them over as members join and leave.
    /// So the order inside a group is per key, not total: events of one key (or, without keys, of
    /// one publishing instance) are handled in publish order by one member at a time; events of
    /// different keys may be handled at the same time by different members.
    ///
    /// The number of partitions is fixed when the group's first member starts: it bounds how many
    /// members can work at once (more stand by). A member configured with another number is refused
    /// (``PostgresEventBridgeError/groupPartitionsMismatch(group:stored:configured:)``).
    ///
    /// ```swift
    /// var settings = PostgresEventBridge.Configuration()
    /// settings.delivery = .durable(.init(group: "billing", partitions: 16))
    /// ```
    public struct ConsumerGroup: Hashable, Sendable {
        /// The group's name, the same on every member: 1 to 190 bytes. Its partitions' cursors are
        /// named `"<name>#<partition>"` in `eventbus_cursors` (a plain consumer of such a name is
        /// refused on the channel).
        public var name: String

        /// How many partitions the channel's events are split into for this group: 1 to 1,024,
        /// fixed when the group is created. Default 16.
        public var partitions: Int

        /// A group named `name` of `partitions` partitions.
        ///
        /// ```swift
        /// let group = PostgresEventBridge.ConsumerGroup(name: "billing", partitions: 32)
        /// ```
        public init(name: String, partitions: Int = 16) {
            self.name = name
            self.partitions = partitions
        }

        /// The most partitions a group may have.
        static let maximumPartitions = 1_024

        /// Whether the name and the number of partitions are within bounds.
        var isValid: Bool {
            (1...190).contains(name.utf8.count) && (1...Self.maximumPartitions).contains(partitions)
        }

        /// The cursor name of partition `index`.
        func cursorName(_ index: Int) -> String { "\(name)#\(index)" }
    }
}
