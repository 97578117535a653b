public import EventBus
import NIOConcurrencyHelpers

/// Records the events of type `E` a bus delivers, and waits for them with a timeout.
public final class Recorder<E: Event>: Sendable {
    private let recorded = NIOLockedValueBox<[E]>([])
    private let token: EventToken

    /// Subscribes to `E` on `bus` (synchronously: on whatever thread dispatches), to the events
    /// whose key is `key` if one is given; `check` runs first in the handler.
    public init(_ type: E.Type, on bus: EventBus, key: String? = nil, check: (@Sendable (E) -> Void)? = nil) {
        let recorded = self.recorded
        var maker = bus.on(type)
        if let key { maker = maker.ofType(key) }
        token = maker.next { event in
            check?(event)
            recorded.withLockedValue { $0.append(event) }
        }
    }

    deinit { token.dispose() }

    /// What has been recorded so far, in delivery order.
    public var events: [E] { recorded.withLockedValue { $0 } }

    /// Waits until `condition` holds for the recorded events, or `timeout` has passed; returns
    /// whether it holds.
    @discardableResult
    public func wait(timeout: Duration = .seconds(10), until condition: ([E]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while true {
            if condition(events) { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits until at least `count` events have been recorded, or `timeout` has passed.
    @discardableResult
    public func wait(forCount count: Int, timeout: Duration = .seconds(10)) async -> Bool {
        await wait(timeout: timeout) { $0.count >= count }
    }
}
