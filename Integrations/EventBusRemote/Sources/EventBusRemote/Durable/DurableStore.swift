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
