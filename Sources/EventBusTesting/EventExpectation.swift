public import Dispatch
@_spi(Integrations) public import EventBus

/// An event a test waits for: subscribed when it is made, so make it **before** the action that
/// dispatches the event, then await ``value(timeout:)``. Made by
/// ``EventBus/expectation(_:where:)``.
///
/// The first event that matches is kept (later ones are ignored); events that do not match are
/// kept too (the last 20), to be listed if the wait times out. Its subscription is synchronous and
/// internal (not counted), and ends with the first match or when the expectation is deallocated.
///
/// ```swift
/// let bus = EventBus()
/// let login = bus.expectation(LoginEvent.self) { $0.userID == "42" }
/// bus.dispatchOnBusQueue(LoginEvent(userID: "42"))   // the action, here asynchronous
/// let event = try await login.value(timeout: .seconds(1))
/// ```
public final class EventExpectation<E: Event>: Sendable {
    private struct State {
        var match: E?
        var others: [E] = []
        var waiter: CheckedContinuation<E, any Error>?
    }

    private static var othersKept: Int { 20 }

    private let state = Locked(State())
    private let token: Locked<EventToken?> = Locked(nil)

    init(bus: EventBus, predicate: @escaping @Sendable (E) -> Bool) {
        let state = state
        let token = token
        let subscription = bus.on(E.self).markedInternal().next { event in
            // The predicate is user code: called with no lock held.
            let matches = predicate(event)
            let (waiter, ended) = state.withLock { state -> (CheckedContinuation<E, any Error>?, Bool) in
                guard state.match == nil else { return (nil, false) }
                guard matches else {
                    if state.others.count == Self.othersKept { state.others.removeFirst() }
                    state.others.append(event)
                    return (nil, false)
                }
                state.match = event
                defer { state.waiter = nil }
                return (state.waiter, true)
            }
            if ended { token.withLock { $0 }?.dispose() }
            waiter?.resume(returning: event)
        }
        token.withLock { $0 = subscription }
        // A dispatch on another thread may have matched before the token was stored: end it now.
        if state.withLock({ $0.match != nil }) { subscription.dispose() }
    }

    deinit { token.withLock { $0 }?.dispose() }

    /// The first matching event: at once if it already came, otherwise when it comes. Throws an
    /// ``EventBusTestingError`` listing the events that did not match if none matches within
    /// `timeout`, and `CancellationError` if the task is cancelled.
    ///
    /// Waits on a Dispatch timer, not on the caller's thread: the main actor stays free to run
    /// main-actor deliveries meanwhile.
    ///
    /// ```swift
    /// let login = bus.expectation(LoginEvent.self)
    /// bus.dispatch(LoginEvent(userID: "42"))
    /// let event = try await login.value(timeout: .milliseconds(100))   // returns at once
    /// ```
    public func value(timeout: DispatchTimeInterval = .seconds(1)) async throws -> E {
        if let match = state.withLock({ $0.match }) { return match }
        let state = state
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<E, any Error>) in
                let match = state.withLock { state -> E? in
                    if state.match == nil { state.waiter = waiter }
                    return state.match
                }
                if let match {
                    waiter.resume(returning: match)
                    return
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                    let (expired, others) = state.withLock { state in
                        defer { state.waiter = nil }
                        return (state.waiter, state.others)
                    }
                    expired?.resume(throwing: Self.timedOut(after: timeout, others: others))
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    private static func timedOut(after timeout: DispatchTimeInterval, others: [E]) -> EventBusTestingError {
        var message = "no matching \(String(reflecting: E.self)) within \(timeout)"
        if others.isEmpty {
            message += "; no event of that type was dispatched"
        } else {
            message += "; \(others.count) that did not match:"
            for event in others { message += "\n  \(event)" }
        }
        return EventBusTestingError(message: message)
    }
}
