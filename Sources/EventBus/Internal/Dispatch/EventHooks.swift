/// Behaviour that one event type adds to a bus: the extension point the NotificationCenter bridge
/// (the `EventBusFoundation` module) plugs into, so that the core never names a Foundation type.
///
/// An event type opts in by conforming to ``HookedEvent``; the bus then makes its hooks once, when
/// the type is first subscribed to or dispatched, and keeps them for the bus's life. The index calls
/// the lifecycle methods under the bus lock: they may only update the hooks' own bookkeeping and
/// must not run user code; work for after unlocking goes through `AfterUnlock.run`.
/// ``dispatch(_:)`` is called with no lock held.
///
/// Cost for event types without hooks: one `nil` check under the lock a dispatch already holds, and
/// one conformance check when a type's bucket is created or a type with no bucket is dispatched.
package protocol EventTypeHooks: AnyObject, Sendable {
    /// Under the bus lock, before a subscription with `keys` is registered: returns the keys to
    /// register it under (the hooks may normalise them), or `nil` to refuse it (the subscriber gets
    /// an already disposed token). Report a refusal through `after.run`.
    func admit(keys: [String], after: inout AfterUnlock) -> [String]?

    /// Under the bus lock, after a subscription was registered: once for each of its keys.
    func subscribed(key: String, after: inout AfterUnlock)

    /// Under the bus lock, when the last subscription to `key` has been unlinked.
    func keyEnded(_ key: String, after: inout AfterUnlock)

    /// Replaces the direct fan-out of `EventBus.dispatch(_:)` for the event type, whose value
    /// `event` is. Called with no lock held; hand the event to the subscribers with
    /// `EventBus.deliver(_:key:includingUnkeyed:)`.
    func dispatch(_ event: any Sendable)

    /// A sticky dispatch of the event type was refused (its events cannot be kept): report it.
    /// Called with no lock held, before ``dispatch(_:)`` delivers the event as a plain dispatch.
    func refuseSticky()
}

/// An event type whose bucket carries hooks on every bus.
package protocol HookedEvent: Event {
    /// Makes the hooks of `Self` for `bus`. Called under the bus lock, once per bus: it must not
    /// run user code or call into the bus.
    static func makeHooks(for bus: EventBus) -> any EventTypeHooks
}
