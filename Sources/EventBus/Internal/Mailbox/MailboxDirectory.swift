import Dispatch

/// A bus's mailboxes by target: one per serial queue (the main queue included) and one per actor,
/// shared by every subscription of the bus on that target (DESIGN §15). Held weakly: a mailbox
/// lives as long as a subscription's lane uses it, and removes itself from here when it goes.
///
/// Its own lock, never taken with the bus's; O(1) per operation.
final class MailboxDirectory: Sendable {
    // A class: a struct with a weak field, copied out of the dictionary, crashed this toolchain
    // (`swift_weakCopyInit` on a null address, Swift 6.3.1, debug build).
    private final class Entry: @unchecked Sendable {
        // @unchecked Sendable: immutable but for the weak reference, which the runtime guards.
        weak var mailbox: Mailbox?
        /// The mailbox's identity, compared without loading the weak reference (a load retains, and
        /// the last release under the lock would run the mailbox's deinit, which takes it).
        let id: ObjectIdentifier

        init(mailbox: Mailbox) {
            self.mailbox = mailbox
            id = ObjectIdentifier(mailbox)
        }
    }

    private let mailboxes = Locked([ObjectIdentifier: Entry]())
    private let inFlight: InFlightDeliveries

    init(inFlight: InFlightDeliveries) {
        self.inFlight = inFlight
    }

    /// The mailbox of `queue`, made if there is none. The main queue has one key whatever wrapper
    /// names it (on Linux every `DispatchQueue.main` is a new wrapper of the same queue, and
    /// `atQueue(.main)` shares the main actor's mailbox).
    func mailbox(for queue: DispatchQueue) -> Mailbox {
        let isMain = isMainQueue(queue)
        let key = isMain ? ObjectIdentifier(MailboxDirectory.self) : ObjectIdentifier(queue)
        return mailbox(key) { mailbox in
            guard case .queue(let known) = mailbox.target else { return false }
            return isMain ? isMainQueue(known) : known === queue
        } make: {
            Mailbox(target: .queue(queue), inFlight: inFlight, directory: self, key: key)
        }
    }

    /// The mailbox of `actor`, made if there is none. A mailbox found under the actor's address is
    /// used only if it is this actor's (checked against its weak reference): a new actor at a dead
    /// one's address gets a mailbox of its own.
    func mailbox<A: Actor>(for actor: A) -> Mailbox {
        let key = ObjectIdentifier(actor)
        return mailbox(key) { mailbox in
            if case .actor(let hop) = mailbox.target { return hop.isHop(to: actor) }
            return false
        } make: {
            Mailbox(target: .actor(.to(actor)), inFlight: inFlight, directory: self, key: key)
        }
    }

    /// The live mailbox under `key` that `matches`, or one `make` makes (filed under `key`). Nothing
    /// is compared, made or released under the lock: a reference loaded there leaves it (its
    /// release could be the last, and an actor's deinit is user code).
    private func mailbox(
        _ key: ObjectIdentifier, matches: (Mailbox) -> Bool, make: () -> Mailbox
    ) -> Mailbox {
        var seen = mailboxes.withLock { mailboxes in Self.load(mailboxes[key]) }
        while true {
            if let mailbox = seen.mailbox, matches(mailbox) { return mailbox }
            let made = make()
            let expected = seen.id
            let changed: (id: ObjectIdentifier?, mailbox: Mailbox?)? = mailboxes.withLock { mailboxes in
                guard mailboxes[key]?.id == expected else { return Self.load(mailboxes[key]) }
                mailboxes[key] = Entry(mailbox: made)
                return nil
            }
            guard let changed else { return made }
            seen = changed  // another thread filed one meanwhile: use it if it matches
        }
    }

    /// An entry's identity and mailbox (a strong reference, or `nil` once it is gone).
    private static func load(_ entry: Entry?) -> (id: ObjectIdentifier?, mailbox: Mailbox?) {
        guard let entry else { return (nil, nil) }
        return (entry.id, entry.mailbox)
    }

    /// Forgets the mailbox under `key` if it is `mailbox` (called from its deinit).
    func remove(_ key: ObjectIdentifier, ifItIs mailbox: ObjectIdentifier) {
        mailboxes.withLock { mailboxes in
            if mailboxes[key]?.id == mailbox { mailboxes[key] = nil }
        }
    }
}
