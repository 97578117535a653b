/// An event that is also delivered as other types: its supertypes, declared by the event itself
/// and checked by the compiler (no reflection, no class hierarchy).
///
/// A dispatch of the event reaches its own handlers first, then, for each supertype in the order
/// declared, the handlers made with ``EventBus/on(anyOf:)`` for that type, with the value the
/// conversion built; then the monitors, the event's own first, then each supertype's. The event's
/// key applies to all of them. A conversion runs only when its supertype has subscribers, on the
/// dispatching thread, with no lock held, once per dispatch. The list is flat: a supertype's own
/// supertypes are not followed. A `handle` handler that stops the dispatch stops it for the
/// supertypes' handlers too (every monitor still runs). An `.untilDelivered` sticky dispatch that
/// a supertype's subscriber receives is not kept.
///
/// Read the list as a `static let`: the bus reads it once per bus and keeps it.
///
/// ```swift
/// protocol ChatActivity: Sendable { var room: String { get } }
///
/// struct MessageSent: Event, ChatActivity, DeliveredAsSupertypes {
///     let room: String
///     static let supertypes: [Supertype<Self>] = [.as((any ChatActivity).self) { $0 }]
/// }
///
/// let bus = EventBus()
/// bus.on(anyOf: (any ChatActivity).self).next { activity in print("activity in", activity.room) }
/// bus.dispatch(MessageSent(room: "7"))   // prints "activity in 7"
/// ```
public protocol DeliveredAsSupertypes: Event {
    /// What else the event is delivered as, in delivery order.
    static var supertypes: [Supertype<Self>] { get }
}
