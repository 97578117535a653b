/// What a `handle` handler (``SubscriberMaker``) decides: let the dispatch go on, or
/// stop it.
///
/// `.stop` ends the current dispatch for every subscriber not yet called (every key, every
/// supertype), except ``SubscriberMaker/monitor()`` subscribers, which still see the event. A
/// dispatch made from inside a handler is independent: its stop ends only itself.
///
/// ```swift
/// let bus = EventBus()
/// let drawerIsOpen = true
/// bus.on(BackTapped.self).priority(.high).handle { _ in
///     drawerIsOpen ? .stop : .continue   // the drawer consumes the back tap
/// }
/// ```
public enum EventPropagation: Sendable, Hashable {
    /// The next subscribers are called.
    ///
    /// ```swift
    /// let token = EventBus.shared.on(BackTapped.self).handle { _ in .continue }
    /// ```
    case `continue`
    /// No further handler is called for this dispatch; monitors still are.
    ///
    /// ```swift
    /// let token = EventBus.shared.on(BackTapped.self).priority(.high).handle { _ in .stop }
    /// ```
    case stop
}
