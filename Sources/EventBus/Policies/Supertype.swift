/// One type an event is also delivered as, with the conversion to it: an entry of
/// ``DeliveredAsSupertypes/supertypes``.
///
/// ```swift
/// protocol AnyBox: Sendable { var anyValue: any Sendable { get } }
/// struct Box<T: Sendable>: Event, AnyBox, DeliveredAsSupertypes {
///     let value: T
///     var anyValue: any Sendable { value }
///     static var supertypes: [Supertype<Self>] { [.as((any AnyBox).self) { $0 }] }   // a wildcard for every Box<T>
/// }
/// ```
public struct Supertype<E: Event>: Sendable {
    /// The supertype.
    let typeID: ObjectIdentifier
    /// The event as the supertype, boxed for the dispatch's walks of the supertype's subscribers.
    let value: @Sendable (E) -> SubjectBox

    /// Delivers the event as `type` too, converted by `convert` (usually `{ $0 }`, an upcast the
    /// compiler checks).
    ///
    /// `convert` runs on the dispatching thread, with no lock held, and only when `type` has
    /// subscribers on the bus.
    ///
    /// ```swift
    /// protocol ChatActivity: Sendable {}
    /// struct Typing: Event, ChatActivity, DeliveredAsSupertypes {
    ///     static let supertypes: [Supertype<Self>] = [.as((any ChatActivity).self) { $0 }]
    /// }
    /// ```
    public static func `as`<S: Sendable>(_ type: S.Type, _ convert: @escaping @Sendable (E) -> S) -> Supertype<E> {
        Supertype(typeID: ObjectIdentifier(S.self)) { event in SubjectValue(convert(event)) }
    }
}
