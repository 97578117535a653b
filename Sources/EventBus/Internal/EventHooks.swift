/// Behaviour that one event type adds to a bus: the extension point the NotificationCenter bridge
/// plugs into, kept generic so that the core never names a Foundation type.
///
/// A bucket (one per event type per bus) may carry hooks, set once and never replaced. The index
/// calls the lifecycle methods under the bus lock: they may only update the hooks' own bookkeeping
/// and must not run user code; work that must happen after unlocking goes in ``AfterUnlock`` and
/// objects to let go of go in ``Retired``. ``EventHooks/dispatch(_:)`` is called without any lock.
///
/// Cost for event types without hooks: one `nil` check, under the lock a dispatch already holds.
class AnyEventHooks: @unchecked Sendable {
    // @unchecked Sendable: subclasses keep their mutable state under the bus lock (the lifecycle
    // methods below are only called under it) or under a lock of their own.

    /// Under the bus lock, before a subscription with `keys` is registered: returns the keys to
    /// register it under (the hooks may normalise them), or `nil` to refuse it (the subscriber gets
    /// an already disposed token). Report a refusal through `afterUnlock`.
    func admit(keys: [String], afterUnlock: inout AfterUnlock) -> [String]? { keys }

    /// Under the bus lock, after a subscription was registered: called once for each of its keys,
    /// whether or not the key already had subscribers.
    func subscribed(key: String, afterUnlock: inout AfterUnlock) {}

    /// Under the bus lock, when the last subscription to `key` has been unlinked.
    func keyEnded(_ key: String, retired: inout Retired) {}
}

/// Hooks for events of type `E`.
class EventHooks<E: Event>: AnyEventHooks, @unchecked Sendable {
    // @unchecked Sendable: see AnyEventHooks.

    /// Replaces the direct fan-out of `EventBus.dispatch(_:)` for `E`. Called without any lock;
    /// hand the event to the subscribers with ``Registry/deliver(_:key:includingUnkeyed:)``.
    func dispatch(_ event: E) {}
}

/// An event type whose bucket carries hooks on every bus, from the bus's creation (so that its
/// first dispatch already goes through them).
protocol HookedEvent: Event {
    /// Makes the hooks of `registry`'s bucket for `Self`. Called once per bus, without the bus lock,
    /// while the registry is being initialized.
    static func makeHooks(for registry: Registry) -> EventHooks<Self>
}

extension HookedEvent {
    /// A bucket for `Self` that carries its hooks.
    static func makeHookedBucket(for registry: Registry) -> AnyBucket {
        let bucket = Bucket<Self>()
        bucket.hooks = makeHooks(for: registry)
        return bucket
    }
}

/// Work that hooks decided on under the bus lock and that must run after it is released (installing
/// an observer, reporting a refused subscription). Empty, it allocates nothing.
struct AfterUnlock {
    private var work: [() -> Void] = []

    mutating func add(_ body: @escaping () -> Void) { work.append(body) }

    /// Runs the work, in the order it was added. Call only with no lock held.
    func run() {
        for body in work { body() }
    }
}
