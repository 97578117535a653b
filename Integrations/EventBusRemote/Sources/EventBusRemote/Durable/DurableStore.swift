public import Foundation

/// Where a durable transport keeps a channel's events and its consumers' cursors: the storage under
/// ``DurableReader``, which holds the durable logic that is not storage (leases and standing by,
/// claims, redelivery, held rows, expired counts).
///
/// A store keeps events in one total order (``Position``), each with the hash of its ordering key
/// (``RemoteBridge/orderingKey(ofEnvelope:)``: consumer groups partition by it). Each consumer has
/// a cursor (``DurableCursor``): the last event it acknowledged, the end of the batch it claimed,
/// the events retention deleted before it read them, and a lease that one owner at a time holds.
/// `EventBusPostgres` keeps them in tables; ``InMemoryDurableStore`` keeps them in memory (tests,
/// one process). Both pass the same conformance suite (the `DurableStoreConformance` library).
///
/// Every method may be called from any thread, concurrently; each is atomic (PostgreSQL: one
/// statement or one transaction).
///
/// ```swift
/// let store = InMemoryDurableStore()
/// try await store.append([envelope])
/// let orders = store.cursor(DurableConsumerID("orders"), owner: UUID())
/// ```
public protocol DurableStore: Sendable {
    /// A place in the store's order of events (PostgreSQL: a row's `(xid, id)`).
    associatedtype Position: Comparable & Sendable

    /// One consumer's cursor in this store.
    associatedtype Cursor: DurableCursor where Cursor.Position == Position

    /// Appends `envelopes` in this order, in one atomic write, each with the hash of its ordering
    /// key, and wakes the channel's receivers. An event is readable once every write that could
    /// still place an event before it has ended.
    func append(_ envelopes: [String]) async throws

    /// The cursor of `consumer` as `owner` sees it (`owner`: the id of the bridge that takes its
    /// lease). Nothing is stored until the cursor is opened (``DurableCursor/open()``).
    func cursor(_ consumer: DurableConsumerID, owner: UUID) -> Cursor

    /// Deletes the events every cursor has acknowledged, then those beyond `retention`, counting
    /// the latter, per cursor that had not passed them (a partition counts only its own), as
    /// expired; never an event a cursor has claimed and not acknowledged. Returns how many events
    /// it deleted.
    func cleanUp(_ retention: DurableRetention) async throws -> Int
}

/// One consumer's cursor in a ``DurableStore``: a plain consumer's or a partition's of a group.
///
/// A cursor has one lease at a time (an owner, an epoch that every taking increments, and an end
/// on the store's clock). Every claim and acknowledgement is fenced by the epoch: an owner that
/// lost the lease (it stalled past its end and another took it) moves nothing.
///
/// ```swift
/// let cursor = store.cursor(DurableConsumerID("orders"), owner: me)
/// _ = try await cursor.open()
/// if let epoch = try await cursor.takeLease(for: .seconds(3)) { … }
/// ```
public protocol DurableCursor: Sendable {
    /// A place in the store's order of events.
    associatedtype Position: Comparable & Sendable

    /// Which consumer (or partition) this cursor is.
    var id: DurableConsumerID { get }

    /// The error the store throws when a lease was lost (a fenced acknowledgement or claim).
    var leaseLost: any Error { get }

    /// Creates the cursor after the last readable event if it is new; returns where it stands.
    func open() async throws -> DurableCursorState<Position>

    /// Takes the lease for `duration` if it is free, lapsed or already this owner's; returns its new
    /// epoch, or `nil` while another owner holds it.
    func takeLease(for duration: Duration) async throws -> Int64?

    /// Extends the lease of `epoch` by `duration` from now; `false` if it is no longer this owner's.
    func renewLease(_ epoch: Int64, for duration: Duration) async throws -> Bool

    /// Gives the lease of `epoch` up (`nil`: whichever this owner holds) and wakes the channel's
    /// receivers, so that one standing by takes it at once.
    func releaseLease(_ epoch: Int64?) async throws

    /// Claims the next events after `position` (at most `limit`; a partition's only), fenced by
    /// `epoch`: the claim's end only moves forward. Returns the claimed batch's last position and
    /// how many events it holds, or `nil` when there is nothing to read. A partition's batch that
    /// is not full ends at the last event any partition may read, so that its cursor moves past
    /// the others' events. Throws ``leaseLost`` if `epoch` is not held.
    func claim(after position: Position, limit: Int, epoch: Int64) async throws -> DurableClaim<Position>?

    /// The events after `position` through `last`, in order (this cursor's partition's only).
    func read(after position: Position, through last: Position, limit: Int) async throws -> [DurableEvent<Position>]

    /// Moves the cursor to `position`, fenced by `epoch`, updating the claim as `claim` says;
    /// returns how many events retention deleted before this consumer read them since the last
    /// acknowledgement (and resets that count). Throws ``leaseLost`` if `epoch` is not held.
    func acknowledge(_ position: Position, claim: DurableClaimUpdate<Position>, epoch: Int64) async throws -> Int
}

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

    public var description: String { name }
}

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

    public init(group: String, index: Int, count: Int) {
        self.group = group
        self.index = index
        self.count = count
    }
}

/// Where a cursor stands (``DurableCursor/open()``).
public struct DurableCursorState<Position: Comparable & Sendable>: Sendable {
    /// The last event acknowledged.
    public var position: Position
    /// The end of the last batch claimed, if beyond ``position``: events a previous owner may have
    /// delivered without acknowledging them.
    public var claimed: Position?
    /// Events retention deleted before the consumer read them, not yet reported.
    public var expired: Int
    /// Through where events read again were announced otherwise (a cursor reset's `again`), if any.
    public var announced: Position?

    public init(position: Position, claimed: Position? = nil, expired: Int = 0, announced: Position? = nil) {
        self.position = position
        self.claimed = claimed
        self.expired = expired
        self.announced = announced
    }
}

/// A claimed batch (``DurableCursor/claim(after:limit:epoch:)``): its last position and how many
/// events it holds.
public struct DurableClaim<Position: Comparable & Sendable>: Sendable {
    /// The batch's last position (a partition's: possibly another partition's event, the horizon).
    public var last: Position
    /// How many of the cursor's events the batch holds.
    public var count: Int

    public init(last: Position, count: Int) {
        self.last = last
        self.count = count
    }
}

/// What an acknowledgement does with the cursor's claim.
public enum DurableClaimUpdate<Position: Comparable & Sendable>: Sendable {
    /// Dropped if the acknowledged position reaches it, kept otherwise.
    case keep
    /// Set back to this position (a previous owner's unacknowledged batch, which must stay
    /// claimed) if beyond the acknowledged one, dropped otherwise: the events after a held one are
    /// no longer claimed.
    case releaseTo(Position?)
}

/// A stored event: its position and its envelope.
public struct DurableEvent<Position: Comparable & Sendable>: Sendable {
    public var position: Position
    public var envelope: String

    public init(position: Position, envelope: String) {
        self.position = position
        self.envelope = envelope
    }
}

/// How long a store keeps events a cursor has not acknowledged: events beyond the newest `count`,
/// and events older than `age`, are deleted (`nil`: no limit of that kind), except those a cursor
/// has claimed and not acknowledged.
///
/// ```swift
/// let deleted = try await store.cleanUp(DurableRetention(count: 100_000, age: .seconds(86_400)))
/// ```
public struct DurableRetention: Sendable, Equatable {
    public var count: Int?
    public var age: Duration?

    public init(count: Int? = nil, age: Duration? = nil) {
        self.count = count
        self.age = age
    }
}
