extension EventBus {
    /// Returns an `AsyncStream` of the events of type `type` dispatched on this bus from now on, in
    /// the spirit of `NotificationCenter.notifications(named:)`.
    ///
    /// Every matching event dispatched after this call returns is yielded, in dispatch order (per
    /// dispatching thread when several threads dispatch). With `keys`, only events whose
    /// ``Event/eventType`` is one of them are yielded, as with ``SubscriberMaker/ofType(_:)``.
    ///
    /// The stream is a bus subscription like any other (it counts in ``subscriptionCount``). It
    /// ends, and the bus forgets it, when the consumer stops: when the consuming task is cancelled,
    /// or when the stream and its iterator are dropped, for example after `break` in
    /// `for await … in bus.events(of:)`. It finishes (the loop ends) when the bus is deallocated.
    ///
    /// > Important: A stream kept in a variable or a property stays subscribed after a `break`,
    /// > until that reference goes too (its buffer keeps filling meanwhile). Let the consuming task
    /// > own the stream — make it in the `for await` line or in the task's capture list — or
    /// > cancel the task.
    ///
    /// **Buffering.** Events are yielded synchronously from `dispatch`, on the dispatching thread,
    /// into the stream's buffer; the consumer takes them out at its own pace. The default policy,
    /// `.unbounded`, loses nothing: a consumer that falls behind receives every event, in order,
    /// later, and the backlog is held in memory meanwhile. For state-like events where only the
    /// latest matter, pass `.bufferingNewest(n)` (a slow consumer then gets the newest `n` and the
    /// older ones are dropped); `.bufferingOldest(n)` keeps the first `n` and drops new ones while
    /// the buffer is full.
    ///
    /// ```swift
    /// // A server component: one task consumes, dispatchers never wait for it. Made in the
    /// // capture list, the stream subscribes now, and the task owns it.
    /// let audit = Task { [logins = bus.events(of: LoginEvent.self)] in
    ///     for await login in logins {
    ///         await auditLog.record(login.userID)
    ///     }
    /// }
    /// // later: the subscription ends with the task
    /// audit.cancel()
    /// ```
    ///
    /// - Parameters:
    ///   - type: The event type to receive.
    ///   - keys: If not empty, only events whose `eventType` is one of these are yielded.
    ///   - bufferingPolicy: What the stream keeps when its consumer falls behind; `.unbounded` (keep
    ///     everything) by default.
    public func events<E: Event>(
        of type: E.Type,
        ofType keys: String...,
        bufferingPolicy: AsyncStream<E>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<E> {
        keys.reduce(on(type)) { maker, key in maker.ofType(key) }.events(bufferingPolicy: bufferingPolicy)
    }
}

extension SubscriberMaker {
    /// Returns the subscription as an `AsyncStream` of events instead of calling a handler; see
    /// ``EventBus/events(of:ofType:bufferingPolicy:)``.
    ///
    /// Keys chosen with ``ofType(_:)`` apply. The stream is fed synchronously from `dispatch`, on the
    /// dispatching thread, whatever ``atQueue(_:)`` said: where the events are processed is the
    /// consuming task's business, and feeding from `dispatch` keeps dispatch order. The
    /// subscription ends when the consuming task is cancelled or the stream and its iterator are
    /// dropped. When the bus ends the subscription itself (it is deallocated, or it refuses the
    /// subscription and returns an already disposed token, as `next` would), the stream finishes.
    ///
    /// ```swift
    /// for await message in bus.on(ChatMessage.self).ofType("room-7").events() {
    ///     print(message.text)
    ///     if message.text == "bye" { break }   // ends the subscription
    /// }
    /// ```
    ///
    /// - Parameter bufferingPolicy: What the stream keeps when its consumer falls behind;
    ///   `.unbounded` (keep everything, in order) by default.
    public func events(
        bufferingPolicy: AsyncStream<E>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<E> {
        EventStreamFeed.makeStream(bufferingPolicy: bufferingPolicy) { handler in
            var immediate = self
            immediate.mode = .immediate
            return immediate.register(handler, owner: nil, isOwned: false)
        }
    }
}

extension OwnedSubscriberMaker {
    /// Returns the owner-bound subscription as an `AsyncStream` of events, which **finishes when the
    /// owner goes away**; see ``EventBus/events(of:ofType:bufferingPolicy:)``.
    ///
    /// The bus holds the owner weakly, so it learns of the owner's death when it next looks: at the
    /// next dispatch that reaches it (that event is not yielded), at its periodic sweep, or at
    /// ``EventBus/purge()``. At that moment it ends the subscription and the stream finishes: a
    /// `for await` loop over it ends after the events already buffered. No event dispatched after
    /// the owner's deallocation is yielded. If the owner is already gone, the stream is finished
    /// from the start. The consumer can also end it early, as with any stream from the bus: by
    /// cancelling its task or dropping the stream.
    ///
    /// ```swift
    /// final class PresenceTracker: EventSubscribing {
    ///     func start() {
    ///         let updates = subscribe(PresenceChanged.self).events()
    ///         Task { [weak self] in
    ///             for await change in updates { self?.apply(change) }
    ///             // reached once the tracker is deallocated (and the bus noticed)
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameter bufferingPolicy: What the stream keeps when its consumer falls behind;
    ///   `.unbounded` (keep everything, in order) by default.
    public func events(
        bufferingPolicy: AsyncStream<E>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<E> {
        guard let owner else {
            let (stream, continuation) = AsyncStream<E>.makeStream(bufferingPolicy: bufferingPolicy)
            continuation.finish()
            return stream
        }
        return EventStreamFeed.makeStream(bufferingPolicy: bufferingPolicy) { handler in
            var immediate = base
            immediate.mode = .immediate
            return immediate.register(handler, owner: owner, isOwned: true)
        }
    }
}

/// The bus's end of an event stream: it yields into the stream's continuation, and finishing the
/// stream is tied to its lifetime.
///
/// The bus holds the feed only through the subscription's handler, so the feed is deallocated
/// exactly when the bus has let go of the subscription — whatever ended it: the consumer (through
/// `onTermination`, which disposes the token), the owner's death once the bus reaped it, or the
/// bus's own deallocation. The core releases handlers after unlocking, so `deinit` runs with no
/// bus lock held, and it finishes the stream: a consumer waiting in `next()` gets `nil`.
/// Nothing on the dispatch path is added for this.
fileprivate final class EventStreamFeed<E: Event>: Sendable {
    private let continuation: AsyncStream<E>.Continuation

    private init(_ continuation: AsyncStream<E>.Continuation) {
        self.continuation = continuation
    }

    deinit { continuation.finish() }

    /// Makes a stream, registers the subscription that feeds it with `register`, and has the
    /// stream's termination by the consumer dispose that subscription.
    static func makeStream(
        bufferingPolicy: AsyncStream<E>.Continuation.BufferingPolicy,
        register: (Handler<E>) -> EventToken
    ) -> AsyncStream<E> {
        let (stream, continuation) = AsyncStream<E>.makeStream(bufferingPolicy: bufferingPolicy)
        let feed = EventStreamFeed(continuation)
        let token = register(.event { event in feed.continuation.yield(event) })
        // Consumer cancelled, or stream and iterator dropped: end the subscription. If the stream
        // already finished (the owner died in between), this runs when the stream is deallocated,
        // and disposing an ended token does nothing.
        continuation.onTermination = { _ in token.dispose() }
        return stream
    }
}
