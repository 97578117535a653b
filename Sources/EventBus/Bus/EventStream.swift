/// An `AsyncSequence` of the events of one type dispatched on a bus: a bus subscription consumed
/// with `for await`. Made by ``EventBus/events(of:ofType:buffering:file:line:)`` and
/// ``SubscriberMaker/events(buffering:file:line:)``.
///
/// Events are put from `dispatch`, on the dispatching thread, into the stream's mailbox (bounded as
/// its ``EventBuffering`` says); the consumer takes them out at its own pace, in dispatch order (per dispatching thread
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

    private let consumer: EventStreamConsumer<E>

    fileprivate init(consumer: EventStreamConsumer<E>) {
        self.consumer = consumer
    }

    /// Runs `body` for each event, in order, in the calling task, until the stream finishes or the
    /// task is cancelled (as a `for await` loop over the stream), with the dispatcher's context
    /// restored around each call when the bus has a ``EventConfigurable/contextPropagator``: the way to
    /// consume a stream whose handlers should continue the dispatcher's trace.
    ///
    /// Each call runs with its own event's dispatcher's context, never the consuming task's: for an
    /// event dispatched with no context, the propagator's
    /// ``EventContextPropagator/withoutContext(for:isolation:_:)`` runs `body` (a
    /// ``TaskLocalContextPropagator`` binds `nil`, or its task-local's default). With no propagator,
    /// `body` runs in the consuming task's own context, as a `for await` loop's body does.
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
        while let entry = await consumer.next() {
            await consumer.core.withContext(
                entry.receipt.context,
                EventContextDelivery(entry.event, hop: .stream, subscriptionID: consumer.token.id),
                isolation: isolation
            ) { await body(entry.event) }
            entry.receipt.finish(ranHandler: true)
        }
    }

    /// The stream's iterator; see ``EventStream``.
    ///
    /// ```swift
    /// var iterator = bus.events(of: LoginEvent.self).makeAsyncIterator()
    /// let first = await iterator.next()
    /// ```
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let consumer: EventStreamConsumer<E>

        /// The next event, or `nil` once the stream finished or the consuming task was cancelled
        /// (which also ends the subscription).
        ///
        /// ```swift
        /// var iterator = bus.events(of: LoginEvent.self).makeAsyncIterator()
        /// while let login = await iterator.next() { print(login.userID) }
        /// ```
        public mutating func next() async -> E? {
            guard let entry = await consumer.next() else { return nil }
            let event = entry.event
            entry.receipt.finish(ranHandler: true)
            return event
        }
    }

    /// Makes the stream's iterator.
    ///
    /// ```swift
    /// var iterator = bus.events(of: LoginEvent.self).makeAsyncIterator()
    /// ```
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: consumer)
    }

    /// Makes a stream: a lane of its own (bounded by `buffering`, gated if the subscription
    /// `replays` sticky events), the subscription that feeds it, registered by `register`, and the
    /// consumer whose end disposes that subscription.
    static func make(
        buffering: EventBuffering, replays: Bool, core: BusCore, register: (Body<E>) -> EventToken
    ) -> EventStream<E> {
        let mailbox = Mailbox(target: .stream, inFlight: core.inFlight, directory: nil, key: nil)
        let lane = MailboxLane<E>(mailbox: mailbox, buffering: buffering, runner: .stream, gated: replays)
        let token = register(.stream(EventStreamFeed(lane)))
        // If the owner was already gone the feed is released by now, and the stream finished.
        return EventStream(consumer: EventStreamConsumer(lane: lane, token: token, core: core))
    }
}

/// The bus's end of an event stream: what the subscription's body holds, so it is deallocated
/// exactly when the bus has let go of the subscription, whatever ended it — the consumer (which
/// disposes the token), the owner's death once the bus reclaimed it, or the bus's own
/// deallocation. The bus releases bodies after unlocking, so `deinit` runs with no bus lock held;
/// it finishes the stream: the consumer takes what is buffered, then `nil`.
final class EventStreamFeed<E: Sendable>: Sendable {
    let lane: MailboxLane<E>

    init(_ lane: MailboxLane<E>) {
        self.lane = lane
    }

    deinit { lane.finishStream() }
}

/// The consumer's end of an event stream, shared by the stream and its iterators: when the
/// consuming task is cancelled, or when the last of them is dropped, it disposes the subscription
/// and ends what is buffered unrun (counted).
private final class EventStreamConsumer<E: Sendable>: Sendable {
    let lane: MailboxLane<E>
    let token: EventToken
    let core: BusCore

    init(lane: MailboxLane<E>, token: EventToken, core: BusCore) {
        self.lane = lane
        self.token = token
        self.core = core
    }

    deinit { _ = stop() }

    /// The next delivery, or `nil` once the stream finished or the task is cancelled (which ends
    /// the subscription: events buffered meanwhile are not handed out).
    func next() async -> MailboxEntry<E>? {
        if Task.isCancelled { return stop() }
        let entry = await lane.take()
        if Task.isCancelled { return stop() }
        return entry
    }

    private func stop() -> MailboxEntry<E>? {
        token.dispose()
        lane.discardStream(of: core)
        return nil
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
    /// **Buffering.** The default, ``EventBuffering/unbounded``, loses nothing: a consumer that
    /// falls behind receives every event, in order, later, and the backlog is held in memory
    /// meanwhile (and given back as it drains). For state-like events where only the latest matter,
    /// pass `.bufferingNewest(n)`; `.bufferingOldest(n)` keeps the first `n` and drops new ones
    /// while the buffer is full; `.backPressure(highWatermark:limit:)` makes
    /// ``send(_:)`` wait for the consumer. Drops are counted (``SubscriptionInfo/droppedCount``).
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
    ///   - buffering: What the stream keeps when its consumer falls behind; ``EventBuffering/unbounded``
    ///     (keep everything) by default.
    ///   - file: Where the subscription is made (`#fileID`); leave it to its default.
    ///   - line: The line of that call (`#line`); leave it to its default.
    public func events<E: Event>(
        of type: E.Type,
        ofType keys: String...,
        buffering: EventBuffering = .unbounded,
        file: StaticString = #fileID, line: UInt = #line
    ) -> EventStream<E> {
        var maker = on(type)
        maker.options.keys = SubscriptionKeys(keys)
        return maker.events(buffering: buffering, file: file, line: line)
    }

    /// ``events(of:ofType:buffering:file:line:)`` with `AsyncStream`'s buffering policy, mapped to
    /// the same ``EventBuffering`` (`.bufferingNewest(n)` and `.bufferingOldest(n)` keep their
    /// meaning).
    ///
    /// ```swift
    /// let latest = bus.events(of: LoginEvent.self, buffering: .bufferingNewest(1))
    /// ```
    @available(*, deprecated, renamed: "events(of:ofType:buffering:file:line:)")
    public func events<E: Event>(
        of type: E.Type,
        ofType keys: String...,
        bufferingPolicy: AsyncStream<E>.Continuation.BufferingPolicy,
        file: StaticString = #fileID, line: UInt = #line
    ) -> EventStream<E> {
        var maker = on(type)
        maker.options.keys = SubscriptionKeys(keys)
        return maker.events(buffering: EventBuffering(bufferingPolicy), file: file, line: line)
    }
}

extension EventBuffering {
    /// The bound that means what `policy` means for an `AsyncStream`.
    init<E>(_ policy: AsyncStream<E>.Continuation.BufferingPolicy) {
        switch policy {
        case .bufferingOldest(let limit): self = .bufferingOldest(limit)
        case .bufferingNewest(let limit): self = .bufferingNewest(limit)
        default: self = .unbounded
        }
    }
}

extension SubscriberMaker where Delivery: NonisolatedDelivery {
    /// Returns the subscription as an ``EventStream`` instead of calling a handler.
    ///
    /// Keys chosen with ``ofType(_:)`` apply. The stream is fed from `dispatch`, on the dispatching
    /// thread, whatever ``atQueue(_:)`` said: where the events are processed is the consuming
    /// task's business, and feeding from `dispatch` keeps dispatch order. An owner-bound stream
    /// (after ``freeWith(_:)``) **finishes when the owner goes away** (once the bus notices: at the
    /// next dispatch that reaches it, by its incremental sweep, or at ``EventBus/purge()``); no
    /// event dispatched after the owner's deallocation is yielded, and if the owner is already gone
    /// the stream is finished from the start.
    ///
    /// ```swift
    /// for await message in bus.on(ChatMessage.self).ofType("room-7").events() {
    ///     print(message.text)
    ///     if message.text == "bye" { break }   // ends the subscription
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - buffering: What the stream keeps when its consumer falls behind (see ``EventBuffering``);
    ///     by default the maker's ``buffering(_:)``, else ``EventBuffering/unbounded``.
    ///   - file: Where the subscription is made (`#fileID`); leave it to its default.
    ///   - line: The line of that call (`#line`); leave it to its default.
    public func events(
        buffering: EventBuffering? = nil,
        file: StaticString = #fileID, line: UInt = #line
    ) -> EventStream<E> {
        EventStream.make(
            buffering: buffering ?? options.buffering, replays: options.traits.replaysSticky, core: bus.core
        ) { body in
            var immediate = self
            immediate.options.queue = nil
            immediate.fileBackPressure(of: body)
            return immediate.register(body: body, at: CallSite(fileID: file, line: line))
        }
    }

    /// ``events(buffering:file:line:)`` with `AsyncStream`'s buffering policy, mapped to the same
    /// ``EventBuffering``.
    ///
    /// ```swift
    /// let latest = bus.on(LoginEvent.self).events(buffering: .bufferingNewest(1))
    /// ```
    @available(*, deprecated, renamed: "events(buffering:file:line:)")
    public func events(
        bufferingPolicy: AsyncStream<E>.Continuation.BufferingPolicy,
        file: StaticString = #fileID, line: UInt = #line
    ) -> EventStream<E> {
        events(buffering: EventBuffering(bufferingPolicy), file: file, line: line)
    }
}
