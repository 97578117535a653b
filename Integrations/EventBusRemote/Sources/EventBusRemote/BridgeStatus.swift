public import EventBus

/// The listening state of a ``RemoteBridge``, dispatched on the bridge's bus whenever it changes.
///
/// A bridge receives the other instances' events only while it listens. Each status tells you when
/// that window opened or closed, so that no loss is silent: events published by other instances
/// between ``interrupted(_:)`` and the next ``resumed(gap:)`` were **not** received, and are not
/// replayed (unless the transport is durable: EventBusPostgres's durable mode reads them after
/// its cursor once it listens again). How many were missed is known per origin only when
/// that origin's next event arrives: each gap is then reported as
/// ``BridgeIssue/missed(origin:count:before:)`` (or ``BridgeIssue/missedUncounted(origin:sequence:)``).
///
/// Statuses are dispatched with `EventBus.dispatchOnBusQueue(_:)`: synchronous subscribers run on
/// the bus's serial queue, never on a transport's thread, in the order the bridge saw the changes and
/// in order with the received events. A subscription ends as any other does (token, owner, bag).
///
/// ```swift
/// bus.on(BridgeStatus.self).next { status in
///     switch status {
///     case .listening: logger.info("cluster events: listening")
///     case .interrupted(let error): logger.warning("cluster events lost from now on: \(error)")
///     case .resumed(let gap): logger.warning("cluster events resumed; missed up to \(gap)")
///     case .stopped: break
///     }
/// }
/// ```
public enum BridgeStatus: Event, CustomStringConvertible {
    /// The bridge listens for the first time since ``RemoteBridge/run()`` started: events
    /// other instances publish from now on are received.
    case listening

    /// The transport stopped receiving: its connection failed, was terminated, missed its
    /// heartbeat, or could not be opened. From now until ``resumed(gap:)`` nothing is received: those events are lost for this
    /// instance. Reported once per outage, however many reconnection attempts fail.
    case interrupted(any Error)

    /// Listening again after ``interrupted(_:)``. `gap` is how long the bridge was not listening,
    /// measured from the moment it noticed the failure (the real window can start a little earlier,
    /// when a connection dies silently: at most the heartbeat's limit). The number of events
    /// missed is not known yet: it is reported per origin when each origin's next event arrives.
    case resumed(gap: Duration)

    /// ``RemoteBridge/run()`` ended (its task was cancelled or the service group shut down): the
    /// transport has closed its connection and nothing more is received.
    case stopped

    /// One line for logs.
    ///
    /// ```swift
    /// bus.on(BridgeStatus.self).next { print($0.description) }
    /// ```
    public var description: String {
        switch self {
        case .listening: return "listening"
        case .interrupted(let error): return "interrupted: \(error)"
        case .resumed(let gap): return "resumed after a gap of \(gap)"
        case .stopped: return "stopped"
        }
    }
}
