/// A channel inside one process, for tests: every payload sent by one of its transports (or
/// injected) reaches every connected transport, the sender included, in one order.
///
/// Each ``InMemoryTransport`` can be disconnected and reconnected to play an outage, and
/// ``inject(_:)`` sends a payload as an outsider would (a forger, a replay); ``sent`` keeps every
/// payload sent, to replay one. Thread-safe; sending is O(transports) under the network's lock
/// (each payload is queued to each connected receiver, not delivered there).
///
/// ```swift
/// let network = InMemoryNetwork()
/// let a = RemoteBridge(bus: EventBus(), transport: network.makeTransport())
/// let bTransport = network.makeTransport()
/// let b = RemoteBridge(bus: EventBus(), transport: bTransport)
/// bTransport.setConnected(false)   // b misses what a publishes now
/// ```
public final class InMemoryNetwork: Sendable {
    /// The largest payload the network's transports carry, in UTF-8 bytes.
    public let maximumPayloadBytes: Int

    /// The channel's name, which the MACs of its bridges cover (``RemoteTransport/channel``);
    /// `"in-memory"` by default.
    ///
    /// ```swift
    /// let other = InMemoryNetwork(channel: "billing")   // a key's envelopes from one do not verify on the other
    /// ```
    public let channel: String

    private let state = Locked(State())

    private struct State {
        var receivers: [ObjectIdentifier: Receiver] = [:]
        var sent: [String] = []
    }

    private struct Receiver {
        let continuation: AsyncStream<InMemoryTransport.Signal>.Continuation
        var connected: Bool
    }

    /// A network named `channel` whose payloads may take up to `maximumPayloadBytes` (PostgreSQL's
    /// NOTIFY limit by default).
    ///
    /// ```swift
    /// let network = InMemoryNetwork(maximumPayloadBytes: 1_000)
    /// ```
    public init(maximumPayloadBytes: Int = 7_999, channel: String = "in-memory") {
        self.maximumPayloadBytes = maximumPayloadBytes
        self.channel = channel
    }

    /// A new transport on this network, connected; one per bridge.
    ///
    /// ```swift
    /// let cluster = RemoteBridge(bus: bus, transport: network.makeTransport())
    /// ```
    public func makeTransport() -> InMemoryTransport {
        InMemoryTransport(network: self)
    }

    /// Every payload sent on the network so far (by transports or ``inject(_:)``), in order.
    ///
    /// ```swift
    /// network.inject(network.sent[0])   // a replay
    /// ```
    public var sent: [String] {
        state.withLock { $0.sent }
    }

    /// Sends `payload` to every connected transport as an outsider would.
    ///
    /// ```swift
    /// network.inject("junk")
    /// ```
    public func inject(_ payload: String) {
        send([payload])
    }

    /// Queues `payloads` to every connected receiver, in one order for all.
    func send(_ payloads: [String]) {
        state.withLock { state in
            state.sent.append(contentsOf: payloads)
            for receiver in state.receivers.values where receiver.connected {
                for payload in payloads { receiver.continuation.yield(.payload(payload)) }
            }
        }
    }

    func attach(
        _ id: ObjectIdentifier, _ continuation: AsyncStream<InMemoryTransport.Signal>.Continuation, connected: Bool
    ) {
        state.withLock { $0.receivers[id] = Receiver(continuation: continuation, connected: connected) }
    }

    func detach(_ id: ObjectIdentifier) {
        state.withLock { $0.receivers[id] = nil }
    }

    /// Connects or disconnects a receiver; tells it so, in order with the payloads.
    func setConnected(_ id: ObjectIdentifier, _ connected: Bool) {
        state.withLock { state in
            guard let receiver = state.receivers[id], receiver.connected != connected else { return }
            state.receivers[id]?.connected = connected
            receiver.continuation.yield(connected ? .up : .down)
        }
    }
}

/// One bridge's transport on an ``InMemoryNetwork``.
///
/// It receives while ``RemoteBridge/run()`` runs and is connected; ``setConnected(_:)`` plays an
/// outage (``BridgeStatus/interrupted(_:)``, payloads sent meanwhile are not received) and its end
/// (``BridgeStatus/resumed(gap:)``). Sending works whether it is connected or not.
///
/// ```swift
/// transport.setConnected(false)
/// try await other.publish(Ping(n: 1))   // lost for this transport's bridge
/// transport.setConnected(true)
/// ```
public final class InMemoryTransport: RemoteTransport {
    /// The network this transport sends on and receives from.
    public let network: InMemoryNetwork

    private let connected = Locked(true)

    enum Signal: Sendable {
        case payload(String)
        case up
        case down
    }

    init(network: InMemoryNetwork) {
        self.network = network
    }

    /// The network's ``InMemoryNetwork/maximumPayloadBytes``.
    public var maximumPayloadBytes: Int { network.maximumPayloadBytes }

    /// The network's ``InMemoryNetwork/channel``.
    ///
    /// ```swift
    /// assert(transport.channel == network.channel)
    /// ```
    public var channel: String { network.channel }

    /// Hands `payloads` to the network, which queues them to every connected transport.
    ///
    /// ```swift
    /// try await transport.send(["junk"])
    /// ```
    public func send(_ payloads: [String]) async throws {
        network.send(payloads)
    }

    /// Receives until the task is cancelled.
    ///
    /// ```swift
    /// Task { try await transport.receive(into: cluster.inbox) }
    /// ```
    public func receive(into inbox: RemoteInbox) async throws {
        let id = ObjectIdentifier(self)
        let (signals, continuation) = AsyncStream<Signal>.makeStream()
        let isConnected = connected.withLock { value in
            network.attach(id, continuation, connected: value)
            return value
        }
        defer { network.detach(id) }
        if isConnected { inbox.listening() } else { inbox.interrupted(InMemoryTransportError.disconnected) }
        await withTaskCancellationHandler {
            for await signal in signals {
                switch signal {
                case .payload(let payload): inbox.deliver(payload)
                case .up: inbox.listening()
                case .down: inbox.interrupted(InMemoryTransportError.disconnected)
                }
            }
        } onCancel: {
            continuation.finish()
        }
    }

    /// Disconnects (`false`) or reconnects (`true`) this transport's receiving side.
    ///
    /// ```swift
    /// transport.setConnected(false)
    /// ```
    public func setConnected(_ value: Bool) {
        connected.withLock { connected in
            connected = value
            network.setConnected(ObjectIdentifier(self), value)
        }
    }
}

/// Why an ``InMemoryTransport`` stopped receiving.
///
/// ```swift
/// if case .interrupted(let error) = status, error is InMemoryTransportError { /* a test's outage */ }
/// ```
public enum InMemoryTransportError: Error {
    /// ``InMemoryTransport/setConnected(_:)`` disconnected it.
    case disconnected
}
