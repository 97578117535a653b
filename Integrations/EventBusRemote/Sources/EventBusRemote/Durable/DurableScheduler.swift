public import EventBus
public import Foundation

/// Publishes events at a time through a ``DurableScheduleStore``, and fires them when due: the
/// logic of scheduled events that is not storage, the same for every store.
///
/// ``publish(_:after:)`` and ``publish(_:at:)`` encode the event now (on the calling thread, its
/// `Encodable` code under no lock) with a MAC bound to the store's channel and the event's id, and
/// store it. ``fireUntilCancelled(every:lookingAhead:batchSize:note:)`` (a running durable bridge's
/// task) fires due events every poll interval, at once again after a full batch; each is sealed by
/// the firing bridge (``RemoteBridge/seal(_:binding:)``, which reports a refusal) and delivered
/// once to every consumer of the channel, to no one before it is due by the store's clock.
///
/// ```swift
/// let scheduler = DurableScheduler(store: store, bridge: bridge, channel: "orders")
/// let reminder = try await scheduler.publish(PaymentDue(orderID: 7), after: .seconds(3_600))
/// if try await scheduler.cancel(reminder) == .cancelled { print("never sent") }
/// ```
public struct DurableScheduler<Store: DurableScheduleStore>: Sendable {
    /// Where scheduled events are kept.
    public let store: Store
    /// The bridge that encodes and seals them (its registry and key).
    public let bridge: RemoteBridge
    /// The channel their MACs are bound to.
    public let channel: String

    /// A scheduler of `bridge`'s events in `store`, their MACs bound to `channel` (the transport's
    /// ``RemoteTransport/channel``).
    public init(store: Store, bridge: RemoteBridge, channel: String) {
        self.store = store
        self.bridge = bridge
        self.channel = channel
    }

    /// What the MAC of scheduled event `id` binds its fields to: its channel and its id.
    ///
    /// ```swift
    /// let text = DurableScheduler<InMemoryDurableStore>.binding(channel: "orders", id: id)
    /// ```
    public static func binding(channel: String, id: UUID) -> String {
        "schedule:\(channel):\(id.uuidString)"
    }

    /// Encodes `event` for scheduled event `id` (registered type, size checked, MAC bound).
    ///
    /// - Throws: `RemoteBridgeError.unregisteredType(_:)`, `RemoteBridgeError.payloadTooLarge(bytes:limit:)`.
    ///
    /// ```swift
    /// let pending = try scheduler.pendingEvent(for: PaymentDue(orderID: 7), id: id)
    /// ```
    public func pendingEvent<E: Event & Codable>(for event: E, id: UUID) throws -> RemoteBridge.PendingEvent {
        try bridge.pendingEvent(for: event, binding: Self.binding(channel: channel, id: id))
    }

    /// Schedules `event` to be published `delay` from now by the store's clock; returns its id,
    /// which ``cancel(_:)`` takes. Nothing is dispatched locally now.
    ///
    /// - Throws: what ``pendingEvent(for:id:)`` and the store throw (then nothing was scheduled).
    ///
    /// ```swift
    /// let reminder = try await scheduler.publish(PaymentDue(orderID: 7), after: .seconds(3_600))
    /// ```
    @discardableResult
    public func publish<E: Event & Codable>(_ event: E, after delay: Duration) async throws -> UUID {
        try await schedule(event, due: .after(delay))
    }

    /// Schedules `event` to be published at `date` by the store's clock; returns its id.
    ///
    /// ```swift
    /// try await scheduler.publish(Report(), at: Date(timeIntervalSince1970: 1_800_000_000))
    /// ```
    @discardableResult
    public func publish<E: Event & Codable>(_ event: E, at date: Date) async throws -> UUID {
        try await schedule(event, due: .at(date))
    }

    /// Cancels scheduled event `id` unless a firer or another cancel won; says which.
    ///
    /// ```swift
    /// let outcome = try await scheduler.cancel(reminder)
    /// ```
    public func cancel(_ id: UUID) async throws -> ScheduledEventCancellation {
        try await store.cancelScheduled(id)
    }

    /// Fires now the events due by the store's clock plus `lookingAhead`, in batches of
    /// `batchSize` until a batch is short; returns how many it took (fired, or refused and marked
    /// so). Safe beside running firers: each event fires once.
    ///
    /// ```swift
    /// let fired = try await scheduler.fireDue(lookingAhead: .seconds(3_600))
    /// ```
    @discardableResult
    public func fireDue(lookingAhead: Duration = .zero, batchSize: Int = 500) async throws -> Int {
        let batchSize = max(1, batchSize)
        var total = 0
        while true {
            let taken = try await store.fireDue(lookingAhead: lookingAhead, limit: batchSize, seal: seal)
            total += taken
            if taken < batchSize { return total }
        }
    }

    /// Fires due events every `interval` (at once again after a full batch) until the task is
    /// cancelled; a pass that fails is noted (`note`) and tried again at the next interval. Passes
    /// start an interval apart, so an event fires at most an interval plus one pass after it is due.
    ///
    /// ```swift
    /// let firer = Task { await scheduler.fireUntilCancelled(every: .seconds(1)) }
    /// ```
    public func fireUntilCancelled(
        every interval: Duration, lookingAhead: Duration = .zero, batchSize: Int = 500,
        note: @Sendable (any Error) -> Void = { _ in }
    ) async {
        let batchSize = max(1, batchSize)
        while !Task.isCancelled {
            let started = ContinuousClock.now
            var taken = 0
            do {
                taken = try await store.fireDue(lookingAhead: lookingAhead, limit: batchSize, seal: seal)
            } catch {
                if Task.isCancelled { break }
                note(error)
            }
            if taken < batchSize { try? await Task.sleep(until: started + interval, clock: .continuous) }
        }
    }

    /// The firer's seal: a due event as this bridge's envelope (a refusal is reported by
    /// ``RemoteBridge/seal(_:binding:)``).
    private var seal: @Sendable (DurableDueEvent) throws -> String {
        { [bridge, channel] due in try bridge.seal(due.pending, binding: Self.binding(channel: channel, id: due.id)) }
    }

    private func schedule<E: Event & Codable>(_ event: E, due: DurableDue) async throws -> UUID {
        let id = UUID()
        try await store.schedule(try pendingEvent(for: event, id: id), id: id, due: due)
        return id
    }
}
