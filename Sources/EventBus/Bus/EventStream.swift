/// An `AsyncSequence` of the events of one type dispatched on a bus: a bus subscription consumed
/// with `for await`. Made by ``EventBus/events(of:ofType:bufferingPolicy:file:line:)`` and
/// ``SubscriberMaker/events(bufferingPolicy:file:line:)``.
///
/// Events are yielded synchronously from `dispatch`, on the dispatching thread, into the stream's
/// buffer; the consumer takes them out at its own pace, in dispatch order (per dispatching thread
/// when several threads dispatch). The subscription ends, and the bus forgets it, when the
/// consumer stops: when the consuming task is cancelled (no event is returned after that, not even
/// one already buffered), or when the stream and its iterator are dropped, for example after
/// `break`. The stream finishes (the loop ends) when the bus ends the subscription: the owner of an
/// owner-bound stream is gone, or the bus is deallocated.
///
/// ```swift
/// let audit = Task { [logins = bus.events(of: LoginEvent.self)] in
///     for await login in logins {
///         print("audit", login.userID)
///     }
/// }
/// audit.cancel()   // the subscription ends with the task
/// ```
public struct EventStream<E: Sendable>: AsyncSequence, Sendable {
    /// The event type the stream yields.
    public typealias Element = E
    /// A stream from the bus never throws: it finishes instead.
    public typealias Failure = Never

    private let base: AsyncStream<EventStreamElement<E>>
    private let token: EventToken

    fileprivate init(base: AsyncStream<EventStreamElement<E>>, token: EventToken) {
        self.base = base
        self.token = token
    }

    /// Runs `body` for each event, in order, in the calling task, until the stream finishes or the
    /// task is cancelled (as a `for await` loop over the stream), with the dispatcher's context
    /// restored around each call when the bus has a ``EventBus/contextPropagator``: the way to
    /// consume a stream whose handlers should continue the dispatcher's trace.
    ///
    /// `body` runs on `isolation`, the caller's actor by default. The subscription ends when this
    /// returns, as after a `for await` loop.
    ///
    /// ```swift
    /// let audit = Task { [logins = bus.events(of: LoginEvent.self)] in
    ///     await logins.consume { login in print("audit", login.userID) }   // the dispatcher's trace
    /// }
    /// ```
    public func consume(isolation: isolated (any Actor)? = #isolation, _ body: (E) async -> Void) async {
        var iterator = makeAsyncIterator()
        while let element = await iterator.nextElement() {
            await BusCore.withContext(
                element.context, EventContextDelivery(element.event, hop: .stream, subscriptionID: token.id),
                isolation: isolation
            ) { await body(element.event) }
        }
    }

    /// The stream's iterator; see ``EventStream``.
    ///
    /// ```swift
    /// var iterator = bus.events(of: LoginEvent.self).makeAsyncIterator()
    /// let first = await iterator.next()
    /// ```
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate var base: AsyncStream<EventStreamElement<E>>.AsyncIterator
        fileprivate let token: EventToken

        /// The next event, or `nil` once the stream finished or the consuming task was cancelled
        /// (which also ends the subscription).
        ///
        /// ```swift
        /// var iterator = bus.events(of: LoginEvent.self).makeAsyncIterator()
        /// while let login = await iterator.next() { print(login.userID) }
        /// ```
        public mutating func next() async -> E? {
            await nextElement()?.event
        }

        /// The next event with the context captured when it was dispatched; see ``next()``.
        fileprivate mutating func nextElement() async -> EventStreamElement<E>? {
            if Task.isCancelled { return stop() }
            let element = await base.next()
            // Cancelled while waiting, or while the consumer was busy before this call: the events
            // buffered meanwhile are not handed out.
            if Task.isCancelled { return stop() }
            return element
        }

        private func stop() -> EventStreamElement<E>? {
            token.dispose()
            return nil
        }
    }

    /// Makes the stream's iterator.
    ///
    /// ```swift
    /// var iterator = bus.events(of: LoginEvent.self).makeAsyncIterator()
    /// ```
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), token: token)
    }

    /// Makes a stream, registers the subscription that feeds it with `register`, and has the
    /// stream's termination by the consumer dispose that subscription.
    /// Each event is kept with the context `core` captures on the dispatching thread, if any.
    static func make(
        bufferingPolicy: AsyncStream<E>.Continuation.BufferingPolicy, core: BusCore,
        register: (Callback<E>) -> EventToken
    ) -> EventStream<E> {
        let (stream, continuation) = AsyncStream<EventStreamElement<E>>.makeStream(
            bufferingPolicy: EventStreamElement<E>.policy(bufferingPolicy))
        let feed = EventStreamFeed(continuation)
        let token = register(
            .event { event in feed.yield(EventStreamElement(event: event, context: core.captureContext())) })
        // Consumer cancelled, or stream and iterator dropped: end the subscription. If the stream
        // already finished (the owner died in between), this runs when the stream is deallocated,
        // and disposing an ended token does nothing.
        continuation.onTermination = { _ in token.dispose() }
        if token.isDisposed { continuation.finish() }
        return EventStream(base: stream, token: token)
    }
}

/// The bus's end of an event stream: it yields into the stream's continuation, and finishing the
/// stream is tied to its lifetime.
///
/// The bus holds the feed only through the subscription's handler, so the feed is deallocated
/// exactly when the bus has let go of the subscription, whatever ended it: the consumer (through
/// `onTermination`, which disposes the token), the owner's death once the bus reclaimed it, or the
/// bus's own deallocation. The bus releases handlers after unlocking, so `deinit` runs with no bus
/// lock held, and it finishes the stream: a consumer waiting in `next()` gets `nil`.
private final class EventStreamFeed<E: Sendable>: Sendable {
    private let continuation: AsyncStream<EventStreamElement<E>>.Continuation

    init(_ continuation: AsyncStream<EventStreamElement<E>>.Continuation) {
        self.continuation = continuation
    }

    deinit { continuation.finish() }

    func yield(_ element: EventStreamElement<E>) { continuation.yield(element) }
}

/// An event in a stream's buffer, with the context captured when it was dispatched (`nil` when the
/// bus has no context propagator).
private struct EventStreamElement<E: Sendable>: Sendable {
    let event: E
    let context: CapturedContext?

    /// `policy` for the buffer of elements.
    static func policy(
        _ policy: AsyncStream<E>.Continuation.BufferingPolicy
    ) -> AsyncStream<EventStreamElement<E>>.Continuation.BufferingPolicy {
        switch policy {
        case .bufferingOldest(let limit): .bufferingOldest(limit)
        case .bufferingNewest(let limit): .bufferingNewest(limit)
        default: .unbounded
        }
    }
}

extension EventBus {
    /// Returns an ``EventStream`` of the events of type `type` dispatched on this bus from now on,
    /// in the spirit of `NotificationCenter.notifications(named:)`.
    ///
    /// Every matching event dispatched after this call returns is yielded, in dispatch order. With
    /// `keys`, only events whose ``Event/eventType`` is one of them are yielded, as with
    /// ``SubscriberMaker/ofType(_:)``. The stream is a bus subscription like any other (it counts in
    /// ``subscriptionCount``); see ``EventStream`` for when it ends.
    ///
    /// > Important: A stream kept in a variable or a property stays subscribed after a `break`,
    /// > until that reference goes too (its buffer keeps filling meanwhile). Let the consuming task
    /// > own the stream — make it in the `for await` line or in the task's capture list — or
    /// > cancel the task.
    ///
    /// **Buffering.** The default policy, `.unbounded`, loses nothing: a consumer that falls behind
    /// receives every event, in order, later, and the backlog is held in memory meanwhile. For
    /// state-like events where only the latest matter, pass `.bufferingNewest(n)`;
    /// `.bufferingOldest(n)` keeps the first `n` and drops new ones while the buffer is full.
    ///
    /// ```swift
    /// let audit = Task { [logins = bus.events(of: LoginEvent.self)] in
    ///     for await login in logins { print("audit", login.userID) }
    /// }
    /// audit.cancel()   // the subscription ends with the task
    /// ```
    ///
    /// - Parameters:
    ///   - type: The event type to receive.
    ///   - keys: If not empty, only events whose `eventType` is one of these are yielded.
    ///   - bufferingPolicy: What the stream keeps when its consumer falls behind; `.unbounded` (keep
    ///     everything) by default.
    ///   - file: Where the subscription is made (`#fileID`); leave it to its default.
    ///   - line: The line of that call (`#line`); leave it to its default.
    public func events<E: Event>(
        of type: E.Type,
        ofType keys: String...,
        bufferingPolicy: AsyncStream<E>.Continuation.BufferingPolicy = .unbounded,
        file: StaticString = #fileID, line: UInt = #line
    ) -> EventStream<E> {
        var maker = on(type)
        maker.options.keys = SubscriptionKeys(keys)
        return maker.events(bufferingPolicy: bufferingPolicy, file: file, line: line)
    }
}

extension SubscriberMaker where Delivery: NonisolatedDelivery {
    /// Returns the subscription as an ``EventStream`` instead of calling a handler.
    ///
    /// Keys chosen with ``ofType(_:)`` apply. The stream is fed synchronously from `dispatch`, on
    /// the dispatching thread, whatever ``atQueue(_:)`` said: where the events are processed is the
    /// consuming task's business, and feeding from `dispatch` keeps dispatch order. An owner-bound
    /// stream (after ``freeWith(_:)``) **finishes when the owner goes away** (once the bus notices:
    /// at the next dispatch that reaches it, by its incremental sweep, or at ``EventBus/purge()``);
    /// no event dispatched after the owner's deallocation is yielded, and if the owner is already
    /// gone the stream is finished from the start.
    ///
    /// ```swift
    /// for await message in bus.on(ChatMessage.self).ofType("room-7").events() {
    ///     print(message.text)
    ///     if message.text == "bye" { break }   // ends the subscription
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - bufferingPolicy: What the stream keeps when its consumer falls behind; `.unbounded`
    ///     (keep everything, in order) by default.
    ///   - file: Where the subscription is made (`#fileID`); leave it to its default.
    ///   - line: The line of that call (`#line`); leave it to its default.
    public func events(
        bufferingPolicy: AsyncStream<E>.Continuation.BufferingPolicy = .unbounded,
        file: StaticString = #fileID, line: UInt = #line
    ) -> EventStream<E> {
        EventStream.make(bufferingPolicy: bufferingPolicy, core: bus.core) { callback in
            var immediate = self
            immediate.options.queue = nil
            return immediate.register(.immediate(callback), at: CallSite(fileID: file, line: line))
        }
    }
}
