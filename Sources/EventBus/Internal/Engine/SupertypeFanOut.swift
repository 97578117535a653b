/// What the registry keeps, in the bucket of an event type that is ``DeliveredAsSupertypes``, to
/// deliver it as its supertypes without knowing the type.
protocol SupertypeDelivering: AnyObject, Sendable {
    /// The supertypes of one dispatch of the bucket's type, `home` (made after unlocking: the list
    /// is user code, read once per bus).
    func subjects(home: Registry.LastingBucket) -> SupertypeSubjects
}

/// The supertypes of `E`, read once (outside the lock: `E.supertypes` is user code) and kept.
final class SupertypeFanOut<E: DeliveredAsSupertypes>: SupertypeDelivering {
    private let list = Locked<SupertypeList?>(nil)

    func subjects(home: Registry.LastingBucket) -> SupertypeSubjects {
        SupertypeSubjects(home: home, list: kept())
    }

    private func kept() -> SupertypeList {
        if let list = list.withLock({ $0 }) { return list }
        let made = SupertypeList(
            typeIDs: E.supertypes.map(\.typeID),
            values: E.supertypes.map { supertype in
                { event in supertype.value(event.assumingMemoryBound(to: E.self).pointee) }
            })
        return list.withLock { kept in
            if kept == nil { kept = made }
            // unsafelyUnwrapped: set on the line above if it was not already.
            return kept.unsafelyUnwrapped
        }
    }
}

/// A type's supertypes, as the dispatch loop uses them: their types, and how to make each one's
/// value from the event's address.
final class SupertypeList: Sendable {
    let typeIDs: [ObjectIdentifier]
    let values: [@Sendable (UnsafeRawPointer) -> SubjectBox]

    init(typeIDs: [ObjectIdentifier], values: [@Sendable (UnsafeRawPointer) -> SubjectBox]) {
        // A dispatch numbers its subjects in a byte (0 is the event itself).
        self.typeIDs = Array(typeIDs.prefix(Int(UInt8.max)))
        self.values = Array(values.prefix(Int(UInt8.max)))
    }
}

/// The supertypes of one dispatch: the event's own bucket (its monitors come after the supertypes'
/// handlers), the supertypes' types (which the registry's walk looks up), and their values, each
/// made the first time a chunk of its subscribers is delivered to, then kept for the dispatch.
final class SupertypeSubjects {
    let home: Registry.LastingBucket
    private let list: SupertypeList
    private var made: [SubjectBox?]

    init(home: Registry.LastingBucket, list: SupertypeList) {
        self.home = home
        self.list = list
        made = Array(repeating: nil, count: list.typeIDs.count)
    }

    /// How many supertypes.
    var count: Int { list.typeIDs.count }

    /// The type of subject `subject` (1-based).
    func typeID(of subject: UInt8) -> ObjectIdentifier { list.typeIDs[Int(subject) - 1] }

    /// The address of subject `subject`'s value (0: the event at `event`), made from the event the
    /// first time (user code: no lock is held).
    func address(of subject: UInt8, event: UnsafeRawPointer) -> UnsafeRawPointer {
        guard subject != 0 else { return event }
        let index = Int(subject) - 1
        if let box = made[index] { return box.address }
        let box = list.values[index](event)
        made[index] = box
        return box.address
    }
}

/// A supertype's value for one dispatch, at an address the walks of its subscribers deliver from.
class SubjectBox {
    let address: UnsafeRawPointer

    fileprivate init(address: UnsafeRawPointer) {
        self.address = address
    }
}

/// A ``SubjectBox`` of a value of type `S`.
final class SubjectValue<S>: SubjectBox {
    private let storage: UnsafeMutablePointer<S>

    init(_ value: S) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: value)
        super.init(address: UnsafeRawPointer(storage))
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }
}
