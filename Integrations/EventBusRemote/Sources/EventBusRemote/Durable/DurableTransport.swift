public import Foundation

/// A durable ``RemoteTransport`` over any ``DurableStore``: sending appends to the store, receiving
/// reads one consumer's cursor with a ``DurableReader``.
///
/// A bridge on it delivers each event once per consumer, across its restarts: the events published
/// while it was stopped are delivered when it runs again, a batch a stopped bridge was reading is
/// acknowledged before it stops, and a second running bridge of the same consumer stands by
/// (`BridgeIssue.standingBy`) and takes over when the first stops (at once) or its lease lapses
/// (a batch it had not acknowledged is delivered again, announced: `BridgeIssue.redelivered`).
/// Events retention deleted before the consumer read them are reported (`BridgeIssue.expired`),
/// and an event this instance cannot decode is held (`BridgeIssue.held`). Over an
/// ``InMemoryDurableStore``, every bridge of the process that shares the store is on one durable
/// channel; a bridge only publishing never opens its consumer's cursor.
///
/// ``receive(into:)`` opens the cursor (created after the store's last event if new) before it
/// reports ``BridgeStatus/listening``, so every event published after that is the consumer's. It
/// reads at each wake-up of a ``WakingDurableStore`` (at once after an append) and every
/// ``DurableReading/pollInterval`` otherwise. When the store throws (or the lease is lost), it
/// reports ``BridgeStatus/interrupted(_:)``, waits a little and reads again
/// (``BridgeStatus/resumed(gap:)``), until its task is cancelled. The transport remembers what it
/// handled across those attempts and across ``RemoteBridge/run()``s (one ``DurableReaderState``):
/// make one transport per bridge.
///
/// Runs on the cooperative pool, in the task of ``RemoteBridge/run()``; nothing of it runs under a
/// lock. Cleaning the store is left to its owner (``DurableStore/cleanUp(_:)``).
///
/// ```swift
/// let store = InMemoryDurableStore()
/// let mailer = RemoteBridge(
///     bus: EventBus(), transport: DurableTransport(store: store, consumer: DurableConsumerID("mailer")))
/// mailer.register(OrderPlaced.self, as: "order.placed")
/// let receiving = Task { try await mailer.run() }   // stopped and run again, it misses nothing
/// ```
public struct DurableTransport<Store: DurableStore>: RemoteTransport {
    /// Where events are appended and read.
    public let store: Store
    /// The consumer this transport reads for (a bridge that only publishes never opens it).
    public let consumer: DurableConsumerID
    /// This transport's id as the owner of the consumer's lease.
    public let owner: UUID
    /// Batch size, lease duration and poll interval.
    public let reading: DurableReading
    /// The channel's name, which the MACs of its bridges cover (``RemoteTransport/channel``).
    public let channel: String
    /// The largest envelope the bridge publishes, in UTF-8 bytes.
    public let maximumPayloadBytes: Int
    /// What the readers remember across reconnections and runs.
    private let state = DurableReaderState<Store.Position>()
    /// Where the readers' notes go.
    private let note: @Sendable (String) -> Void

    /// A transport appending to `store` and reading for `consumer`.
    ///
    /// - Parameters:
    ///   - store: The store; bridges that exchange events share it.
    ///   - consumer: The consumer read for: every bridge with this consumer (and this store) is one
    ///     consumer, one of them reading at a time.
    ///   - owner: This transport's id as the lease's owner (a new one by default: one per bridge).
    ///   - reading: Batch size, lease duration, poll interval.
    ///   - channel: The channel's name, covered by the MACs (with a shared key).
    ///   - maximumPayloadBytes: The largest envelope published (1 MiB by default).
    ///   - note: Where the reader's notes go (standing by, holds, slow renewals): a log.
    ///
    /// ```swift
    /// let transport = DurableTransport(
    ///     store: store, consumer: DurableConsumerID("mailer"),
    ///     reading: DurableReading(batchSize: 100, leaseDuration: .seconds(6)))
    /// ```
    public init(
        store: Store, consumer: DurableConsumerID, owner: UUID = UUID(), reading: DurableReading = DurableReading(),
        channel: String = "durable", maximumPayloadBytes: Int = 1 << 20,
        note: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.store = store
        self.consumer = consumer
        self.owner = owner
        self.reading = reading
        self.channel = channel
        self.maximumPayloadBytes = maximumPayloadBytes
        self.note = note
    }

    /// Appends `payloads` to the store, in this order, in one write (``DurableStore/append(_:)``).
    ///
    /// Called by the bridge's serial publisher, one call at a time.
    ///
    /// ```swift
    /// try await transport.send([envelope])
    /// ```
    public func send(_ payloads: [String]) async throws {
        try await store.append(payloads)
    }

    /// Reads the consumer's cursor into `inbox` until the task is cancelled: opens the cursor, says
    /// it listens, and runs a ``DurableReader`` (lease, standing by, resume, batches); after a
    /// store failure or a lost lease, reports the interruption and starts again. Returns once it
    /// stopped, its last batch acknowledged and its lease given up.
    ///
    /// Called by ``RemoteBridge/run()``, on its task.
    ///
    /// ```swift
    /// Task { try await transport.receive(into: bridge.inbox) }   // what bridge.run() does
    /// ```
    public func receive(into inbox: RemoteInbox) async throws {
        let waker = DurableWaker()
        // Registered before the cursor is opened: no append after it goes unnoticed.
        let waking = store as? any WakingDurableStore
        waking?.register(waker)
        defer { waking?.unregister(waker) }
        let cursor = store.cursor(consumer, owner: owner)
        var failures = 0
        while !Task.isCancelled {
            do {
                _ = try await cursor.open()
                inbox.listening()
                let reader = DurableReader(cursor: cursor, settings: reading, state: state, note: note)
                try await reader.run(into: inbox, waker: waker)
                failures = 0
            } catch {
                if Task.isCancelled || error is CancellationError { return }
                note("reading consumer \(consumer) failed: \(error)")
                inbox.interrupted(error)
                failures += 1
                let delay = min(Duration.milliseconds(25) * (1 << min(failures, 6)), reading.leaseDuration / 3)
                try? await Task.sleep(for: delay)
            }
        }
    }
}
