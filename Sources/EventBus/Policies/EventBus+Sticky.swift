// Reading and removing the sticky events a bus keeps (see `dispatch(_:sticky:)`).
extension EventBus {
    /// The latest sticky event kept for `type` and `key` (`nil`: the events without a key), or
    /// `nil` if none is kept or it has expired. Does not remove it. O(1): like every operation, it
    /// lets go of a few expired events of the bus at most (it checks the deadline of what it
    /// returns).
    ///
    /// ```swift
    /// bus.dispatch(LoginEvent(userID: "42"), sticky: .latest)
    /// let current = bus.sticky(LoginEvent.self)   // LoginEvent(userID: "42")
    /// ```
    public func sticky<E: Event>(_ type: E.Type, ofType key: String? = nil) -> E? {
        core.latestSticky(of: type, key: key)
    }

    /// Every sticky event kept for `type` and `key` (`nil`: the events without a key), oldest
    /// first: several with ``StickyPolicy/last(_:)``. Expired ones are left out. O(n) in the
    /// events returned.
    ///
    /// ```swift
    /// let recent = bus.stickyEvents(LoginEvent.self)
    /// ```
    public func stickyEvents<E: Event>(_ type: E.Type, ofType key: String? = nil) -> [E] {
        core.stickyEvents(of: type, key: key)
    }

    /// Removes and returns the latest sticky event kept for `type` and `key` (`nil`: the events
    /// without a key). With ``StickyPolicy/untilDelivered``, this makes the caller its one taker.
    /// O(1).
    ///
    /// ```swift
    /// if let pending = bus.takeSticky(LoginEvent.self) { print("handling", pending.userID) }
    /// ```
    public func takeSticky<E: Event>(_ type: E.Type, ofType key: String? = nil) -> E? {
        core.takeSticky(of: type, key: key)
    }

    /// Removes the sticky events kept for `type` and `key` (`nil`: the events without a key);
    /// returns how many it removed. An ``StickyPolicy/untilDelivered`` event held back while its
    /// delivery is under way (on another thread, or enqueued and not run yet) is removed too (not
    /// counted): it will not be kept. O(1): the events are released after the bus's lock, however
    /// many there are.
    ///
    /// ```swift
    /// bus.removeSticky(LoginEvent.self)   // e.g. at logout
    /// ```
    @discardableResult
    public func removeSticky<E: Event>(_ type: E.Type, ofType key: String? = nil) -> Int {
        core.removeSticky(of: type, key: key)
    }

    /// Removes every sticky event of every type from the bus.
    ///
    /// ```swift
    /// bus.removeAllSticky()
    /// ```
    public func removeAllSticky() {
        core.removeAllSticky()
    }

    /// The number of sticky events the bus keeps, every type and key, after letting go of the
    /// expired ones: a few at a time, letting other threads take the bus's lock in between. O(1)
    /// amortised (each event expires once).
    ///
    /// ```swift
    /// assert(bus.stickyCount == 0)
    /// ```
    public var stickyCount: Int { core.stickyCount }
}
