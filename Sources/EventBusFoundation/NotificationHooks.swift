import EventBus
import Foundation

/// The per-bus settings of the bridge, kept in the bus's `extensionConfiguration`.
struct NotificationBridgeConfiguration: Sendable {
    let center: NotificationCenter
}

/// The hooks of ``NotificationEvent`` on one bus: one observer per subscribed name on the bus's
/// center, and dispatch by posting to that center.
///
/// Reference counting follows the bus index, under the bus lock: a name is observed while at least
/// one of its keys (the plain name, or a name filtered by sender) has a subscription. The transitions
/// are decided under the bus lock; the center is only called after unlocking (install) or when the
/// retired ``Observation`` is released (removal), so no Foundation or user code runs under the lock.
final class NotificationHooks: EventTypeHooks, @unchecked Sendable {
    // @unchecked Sendable: `observations` is touched only by the lifecycle methods, which the index
    // calls under the bus lock; `issueHandler` has its own lock; everything else is set in init and
    // never written again (`bus` is a `weak var` only because `weak let` needs Swift 6.2).

    let center: NotificationCenter
    private weak var bus: EventBus?
    /// The handler of ``EventBus/notificationBridgeIssueHandler``.
    let issueHandler = Locked<(@Sendable (NotificationBridgeIssue) -> Void)?>(nil)

    /// Guarded by the bus lock: the observation of each name, and the keys that keep it.
    private var observations: [String: (observation: Observation, keys: Set<String>)] = [:]
    /// The number of observers this bus has on its center now (for tests and introspection).
    let installedObservers = Locked(0)

    init(bus: EventBus) {
        let configuration = bus.extensionConfiguration as? NotificationBridgeConfiguration
        // Only the shared bus bridges with the process's default center: two buses made with
        // `EventBus()` must not reach each other's subscribers through it.
        center = configuration?.center ?? (bus === EventBus.shared ? .default : NotificationCenter())
        self.bus = bus
    }

    func admit(keys: [String], after: inout AfterUnlock) -> [String]? {
        guard !keys.isEmpty else {
            after.run { self.report(.unnamedSubscriptionRefused) }
            return nil
        }
        if let unsupported = keys.first(where: { SenderKey.isReserved($0) && !SenderKey.isSenderKey($0) }) {
            let name = Notification.Name(SenderKey.unescapedName(unsupported))
            after.run { self.report(.unsupportedName(name)) }
            return nil
        }
        // A subscription to a name already gets every notification of that name: a sender filter
        // for the same name would deliver some of them twice (the observer fans out once per key).
        let plainNames = Set(keys.filter { !SenderKey.isSenderKey($0) })
        return keys.filter { !SenderKey.isSenderKey($0) || !plainNames.contains(SenderKey.name(ofKey: $0)) }
    }

    func subscribed(key: String, after: inout AfterUnlock) {
        let name = SenderKey.name(ofKey: key)
        var entry =
            observations[name] ?? (
                Observation(name: Notification.Name(name), center: center, bus: bus, installed: installedObservers), []
            )
        entry.keys.insert(key)
        observations[name] = entry
        // Every subscriber installs (idempotently) before its `next` returns, so that a post made
        // after `next` returned reaches it, even if another thread created the observation.
        let observation = entry.observation
        after.run { observation.install() }
    }

    func keyEnded(_ key: String, after: inout AfterUnlock) {
        let name = SenderKey.name(ofKey: key)
        guard var entry = observations[name] else { return }
        entry.keys.remove(key)
        if entry.keys.isEmpty {
            observations[name] = nil
            // Stale from now on: a post that still reaches its block delivers nothing. Released
            // after unlocking, its deinit removes the observer from the center.
            entry.observation.retire()
            after.release(entry.observation)
        } else {
            observations[name] = entry
        }
    }

    func refuseSticky() {
        report(.stickyRefused)
    }

    func dispatch(_ event: any Sendable) {
        // Only ever a `NotificationEvent`: these are its hooks. Bus subscribers get it through the
        // observer, exactly once; legacy observers get it too.
        guard let event = event as? NotificationEvent else { return }
        center.post(event.notification)
    }

    /// Hands `issue` to the bus's issue handler; without one, debug builds print it to standard error.
    func report(_ issue: NotificationBridgeIssue) {
        if let handler = issueHandler.withLock({ $0 }) {
            handler(issue)
        } else {
            Diagnostics.writeInDebugBuilds("EventBus: \(issue)")
        }
    }
}

/// The observer of one name on a bus's center, from the first subscription to that name until the
/// last one ends.
///
/// At most one observation per (bus, name) is current at any time (they are made and retired under
/// the bus lock), and only the current one delivers. So when the last subscription ends while a new
/// one arrives, the retiring observer and its successor may both be installed for a moment, but a
/// post is delivered to the bus once.
final class Observation: @unchecked Sendable {
    // @unchecked Sendable: every stored property is immutable or behind a lock, except `bus`, a
    // `weak var` set in init and never written again (`weak let` needs Swift 6.2).

    /// Orders an observer block after its installation, for ThreadSanitizer's benefit. The center
    /// already publishes blocks under its own lock, but on Linux swift-corelibs-foundation's lock is
    /// invisible to ThreadSanitizer, which then reports the block's first reads of this object as
    /// races. The installer passes through this lock after making the block, and the block before
    /// reading anything: an empty critical section, taken once per observer call. (Its state is not
    /// `Void`: a zero-sized state would share its address with the mutex, which confuses TSan.)
    private static let handOff = Locked(false)

    let name: Notification.Name
    private let center: NotificationCenter
    private weak var bus: EventBus?
    private let installed: Locked<Int>
    private let current = Locked(true)
    private let installation = Locked<(any NSObjectProtocol)?>(nil)

    init(name: Notification.Name, center: NotificationCenter, bus: EventBus?, installed: Locked<Int>) {
        self.name = name
        self.center = center
        self.bus = bus
        self.installed = installed
    }

    deinit {
        if let observer = installation.withLock({ $0 }) {
            center.removeObserver(observer)
            installed.withLock { $0 -= 1 }
        }
    }

    /// Whether this is the observation that delivers for its name.
    var isCurrent: Bool { current.withLock { $0 } }

    /// Marks the observation stale (called under the bus lock: runs no other code).
    func retire() { current.withLock { $0 = false } }

    /// Adds the observer to the center unless it is installed or stale. Called with no bus lock.
    func install() {
        installation.withLock { observer in
            // Installers are serialized by this lock, so the center gets one observer. The block
            // never takes this lock, so holding it while the center takes its own cannot deadlock.
            guard observer == nil, isCurrent else { return }
            let block: @Sendable (Notification) -> Void = { [weak self] notification in
                Observation.handOff.withLock { _ in }
                self?.receive(notification)
            }
            Self.handOff.withLock { _ in }
            observer = center.addObserver(forName: name, object: nil, queue: nil, using: block)
            installed.withLock { $0 += 1 }
        }
    }

    /// The observer block: delivers the notification to the bus's subscribers of its name, then to
    /// those of its name filtered by its sender.
    private func receive(_ notification: Notification) {
        guard isCurrent, let bus else { return }
        let event = NotificationEvent(notification)
        bus.deliverToKeyed(event, key: name.rawValue)
        if let sender = notification.object, type(of: sender) is AnyClass {
            let key = SenderKey.key(name: name, sender: sender as AnyObject)
            bus.deliverToKeyed(event, key: key)
        }
    }
}

/// The routing keys of subscriptions filtered by sender: `"\0<sender id in hex>\0<name>"`.
///
/// A plain key is the name itself. Names that start with U+0000 are reserved for these keys: a
/// subscription to such a name is refused and reported (``NotificationBridgeIssue/unsupportedName(_:)``).
enum SenderKey {
    static func key(name: Notification.Name, sender: AnyObject) -> String {
        let id = UInt(bitPattern: ObjectIdentifier(sender))
        return "\u{0}\(String(id, radix: 16))\u{0}\(name.rawValue)"
    }

    /// Whether `key` starts with U+0000, the prefix of sender keys.
    static func isReserved(_ key: String) -> Bool { key.utf8.first == 0 }

    /// The key of a subscription to the notifications named `name` from any sender. A name that
    /// starts with U+0000 could pass for a sender key: it is given one more U+0000, which no sender
    /// key has (their sender id is never empty), so that `admit` refuses and reports it.
    static func key(name: Notification.Name) -> String {
        isReserved(name.rawValue) ? "\u{0}" + name.rawValue : name.rawValue
    }

    /// The name of a key made by ``key(name:)`` for a reserved name, or the key itself.
    static func unescapedName(_ key: String) -> String {
        key.utf8.starts(with: [0, 0]) ? String(key.dropFirst()) : key
    }

    /// Whether `key` is a well-formed sender key.
    static func isSenderKey(_ key: String) -> Bool {
        let utf8 = key.utf8
        guard utf8.first == 0 else { return false }
        let afterPrefix = utf8.dropFirst()
        guard let end = afterPrefix.firstIndex(of: 0), end > afterPrefix.startIndex else { return false }
        return afterPrefix[..<end].allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    static func name(ofKey key: String) -> String {
        guard isSenderKey(key) else { return key }
        let afterID = key.dropFirst().drop { $0 != "\u{0}" }.dropFirst()
        return String(afterID)
    }
}
