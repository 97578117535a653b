/// Reading and removing the sticky events a bus keeps: each one registry operation under the lock,
/// what it lets go of released after unlocking.
extension BusCore {
    /// The latest sticky event of `E` kept for `key`, unexpired.
    func latestSticky<E: Sendable>(of _: E.Type, key: String?) -> E? {
        withRegistry { registry in registry.latestSticky(of: E.self, key: key) } ?? nil
    }

    /// Every unexpired sticky event of `E` kept for `key`, oldest first.
    func stickyEvents<E: Sendable>(of _: E.Type, key: String?) -> [E] {
        withRegistry { registry in registry.stickyEvents(of: E.self, key: key) }
    }

    /// Removes and returns the latest sticky event of `E` kept for `key`.
    func takeSticky<E: Sendable>(of _: E.Type, key: String?) -> E? {
        withRegistry { registry in registry.takeSticky(of: E.self, key: key) } ?? nil
    }

    /// Removes the sticky events of `E` kept for `key`; returns how many.
    func removeSticky<E: Sendable>(of _: E.Type, key: String?) -> Int {
        withRegistry { registry in registry.removeSticky(of: E.self, key: key) }
    }
}
