public import Dispatch
@_spi(Integrations) public import EventBus

extension EventBus {
    /// Starts recording the events of `type` (of the key `key` only, if given) dispatched on this
    /// bus from now on, in dispatch order.
    ///
    /// ```swift
    /// let logins = bus.record(LoginEvent.self)
    /// session.logIn(userID: "42")
    /// #expect(logins.events.map(\.userID) == ["42"])
    /// ```
    public func record<E: Event>(_ type: E.Type, ofType key: String? = nil) -> EventRecorder<E> {
        EventRecorder(bus: self, key: key)
    }

    /// An expectation of an event of `type` that satisfies `predicate`, subscribed now: make it
    /// before the action, then await its ``EventExpectation/value(timeout:)``.
    ///
    /// `predicate` runs on the dispatching thread, with no lock held.
    ///
    /// ```swift
    /// let login = bus.expectation(LoginEvent.self) { $0.userID == "42" }
    /// session.logIn(userID: "42")
    /// let event = try await login.value()
    /// ```
    public func expectation<E: Event>(
        _ type: E.Type, where predicate: @escaping @Sendable (E) -> Bool = { _ in true }
    ) -> EventExpectation<E> {
        EventExpectation(bus: self, predicate: predicate)
    }

    /// Waits for an event of `type` that satisfies `predicate`, dispatched from now on (by
    /// another task, a queue or a timer), and returns it; throws an ``EventBusTestingError`` that
    /// lists the events of the type that did not match if none matches within `timeout`.
    ///
    /// It subscribes when called: for an action you start yourself, make an
    /// ``expectation(_:where:)`` first, then act, then wait.
    ///
    /// ```swift
    /// bus.dispatchOnBusQueue(LoginEvent(userID: "42"))   // runs later, on the bus queue
    /// let e = try await bus.expect(LoginEvent.self, where: { $0.userID == "42" }, timeout: .seconds(1))
    /// ```
    public func expect<E: Event>(
        _ type: E.Type, where predicate: @escaping @Sendable (E) -> Bool = { _ in true },
        timeout: DispatchTimeInterval = .seconds(1)
    ) async throws -> E {
        try await expectation(type, where: predicate).value(timeout: timeout)
    }

    /// Throws an ``EventBusTestingError`` listing them if events of `type` that satisfy
    /// `predicate` are dispatched during `duration` from now.
    ///
    /// ```swift
    /// session.stayLoggedIn()
    /// try await bus.expectNone(LogoutEvent.self, during: .milliseconds(100))
    /// ```
    public func expectNone<E: Event>(
        _ type: E.Type, where predicate: @escaping @Sendable (E) -> Bool = { _ in true },
        during duration: DispatchTimeInterval
    ) async throws {
        let recorder = record(type)
        try await Task.sleep(nanoseconds: duration.nanosecondsClamped)
        recorder.dispose()
        let unexpected = recorder.events.filter(predicate)
        guard !unexpected.isEmpty else { return }
        var message = "\(unexpected.count) unexpected \(String(reflecting: E.self)) within \(duration):"
        for event in unexpected { message += "\n  \(event)" }
        throw EventBusTestingError(message: message)
    }

    /// Waits until every delivery this bus enqueued on a queue (``SubscriberMaker/atQueue(_:)``),
    /// the main actor, or an actor (``SubscriberMaker/isolated(to:)``) before the call has run (or
    /// ended unrun: disposed, owner gone). Deliveries enqueued while it waits are not waited for,
    /// so it returns under a steady producer too. A stream's buffered events are not waited for:
    /// its consumer takes them when it will. Checks every millisecond, sleeping in between, so that
    /// the main actor and the cooperative pool stay free to run the deliveries.
    ///
    /// On Linux, where nothing else drives a test process's queues, call it before asserting what
    /// queued subscribers did. A handler that never returns makes it wait forever: see
    /// ``settle(timeout:)``. It returns at once when its task is cancelled.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).atQueue(.global()).next { _ in saved.increment() }.disposed(by: bag)
    /// bus.dispatch(LoginEvent(userID: "42"))
    /// await bus.settle()
    /// #expect(saved.value == 1)
    /// ```
    public func settle() async {
        _ = try? await settleEnqueued(deadline: nil)
    }

    /// ``settle()``, but throws an ``EventBusTestingError`` (naming how many of those deliveries are
    /// still waiting) if those enqueued before the call have not all run within `timeout`, and
    /// `CancellationError` as soon as its task is cancelled.
    ///
    /// ```swift
    /// try await bus.settle(timeout: .seconds(2))
    /// ```
    public func settle(timeout: DispatchTimeInterval) async throws {
        let deadline = DispatchTime.now().uptimeNanoseconds &+ timeout.nanosecondsClamped
        let waiting = try await settleEnqueued(deadline: deadline)
        guard waiting == 0 else {
            throw EventBusTestingError(message: "\(waiting) enqueued deliveries had not run after \(timeout)")
        }
    }

    /// Throws an ``EventBusTestingError`` listing every live subscription the app made on this bus,
    /// each with its call site and owner: for the end of a test, to find a subscription that
    /// outlived the object that made it.
    ///
    /// It sees every subscription the app made, NotificationCenter bridges included
    /// (`bridge(...)`), and none of this kit's own (``record(_:ofType:)``, expectations). A
    /// subscription whose owner is gone is not live: the bus never calls it again, even before it
    /// reclaims it (at the next dispatch of its type, by its incremental sweep, or at
    /// ``EventBus/purge()``), so it passes without a `purge()`. An owner the bus only reads on the
    /// main queue (that of an `onMainActor()` or `atQueue(.main)` subscription) cannot be checked
    /// off it: called from another thread, such a subscription counts as live and is listed as
    /// "not checked off the main queue"; call this from the main actor to check its owner.
    ///
    /// ```swift
    /// var screen: ProfileScreen? = ProfileScreen(bus: bus)
    /// screen = nil                          // its subscriptions end with it
    /// try bus.requireNoLiveSubscriptions()  // passes: no purge() needed
    /// ```
    public func requireNoLiveSubscriptions() throws {
        let live = subscriptions.filter { !$0.isInternal && $0.isOwnerAlive != false }
        guard !live.isEmpty else { return }
        var message = "\(live.count) live subscription\(live.count == 1 ? "" : "s"):"
        for info in live { message += "\n  \(info)" }
        throw EventBusTestingError(message: message)
    }

    /// Throws an ``EventBusTestingError`` listing them if a throwing handler on this bus threw
    /// since the bus was made (the bus keeps the last 64 and counts them all).
    ///
    /// ```swift
    /// bus.dispatch(LoginEvent(userID: "42"))
    /// try bus.requireNoHandlerErrors()
    /// ```
    public func requireNoHandlerErrors() throws {
        let (recent, count) = handlerErrors
        guard count > 0 else { return }
        var message = "\(count) handler error\(count == 1 ? "" : "s")"
        message += recent.count < count ? " (the last \(recent.count)):" : ":"
        for error in recent { message += "\n  \(error)" }
        throw EventBusTestingError(message: message)
    }

    /// Throws an ``EventBusTestingError`` if a bounded subscription of this bus
    /// (``SubscriberMaker/buffering(_:)``) dropped a delivery since the bus was made, naming how
    /// many and the live subscriptions that dropped some.
    ///
    /// ```swift
    /// bus.on(LoginEvent.self).atQueue(.global()).buffering(.bufferingNewest(10)).next { _ in }
    ///     .disposed(by: bag)
    /// bus.dispatch(LoginEvent(userID: "42"))
    /// try bus.requireNoDroppedDeliveries()
    /// ```
    public func requireNoDroppedDeliveries() throws {
        let count = droppedDeliveryCount
        guard count > 0 else { return }
        var message = "\(count) deliver\(count == 1 ? "y" : "ies") dropped by a subscription's bound"
        let dropping = subscriptions.filter { $0.droppedCount > 0 }
        if !dropping.isEmpty { message += ":" }
        for info in dropping { message += "\n  \(info)" }
        throw EventBusTestingError(message: message)
    }
}
