/// What carries a ``RemoteBridge``'s envelopes between instances: a channel that every instance
/// sends on and receives from (PostgreSQL's `LISTEN`/`NOTIFY` in `EventBusPostgres`,
/// ``InMemoryTransport`` in tests).
///
/// A transport only moves strings. The bridge does everything else: envelopes, wire names,
/// integrity, duplicates, loss accounting, statuses and issues. A transport must:
/// - deliver every payload it sends to every instance that is receiving, **its sender included**
///   (the bridge recognises its own echo), each instance's payloads in the order they were sent;
/// - call ``RemoteInbox/deliver(_:)`` for each payload received, one at a time, in that order;
/// - call ``RemoteInbox/listening()`` each time it starts receiving and
///   ``RemoteInbox/interrupted(_:)`` each time it stops, and retry on its own until cancelled.
///
/// ```swift
/// struct LoopbackTransport: RemoteTransport {
///     let network: InMemoryNetwork
///     var maximumPayloadBytes: Int { 8_000 }
///     func send(_ payloads: [String]) async throws { /* hand them to the channel */ }
///     func receive(into inbox: RemoteInbox) async throws {
///         inbox.listening()
///         // for each payload received until the task is cancelled: inbox.deliver(payload)
///     }
/// }
/// ```
public protocol RemoteTransport: Sendable {
    /// The name of the channel the transport carries, the same on every instance: with a shared
    /// key, every MAC covers it, so an envelope signed for one channel is refused on another.
    /// The empty string by default (MACs then bind no channel). Read once, when the bridge is made.
    ///
    /// ```swift
    /// var channel: String { "app_events" }
    /// ```
    var channel: String { get }

    /// The largest payload the transport carries, in UTF-8 bytes; the bridge refuses a publish
    /// whose envelope is larger.
    var maximumPayloadBytes: Int { get }

    /// Sends `payloads` in this order, at once where the transport can (one statement, one
    /// transaction); returns once sent, throws if they may not have been.
    ///
    /// Called by the bridge's serial publisher, one call at a time, never under a lock.
    func send(_ payloads: [String]) async throws

    /// Receives until the calling task is cancelled, reconnecting after failures, and hands each
    /// payload and each change of state to `inbox`; returns once it has stopped receiving.
    ///
    /// Called by ``RemoteBridge/run()``, on its task.
    func receive(into inbox: RemoteInbox) async throws
}

extension RemoteTransport {
    /// The empty string: a transport that names no channel gets MACs bound to none.
    ///
    /// ```swift
    /// let name = transport.channel   // "" unless the transport names its channel
    /// ```
    public var channel: String { "" }
}
