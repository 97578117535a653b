/// A value that can travel on an ``EventBus``.
///
/// An event's **static type** is its first routing key: subscribers of `LoginEvent` receive
/// `LoginEvent`s and nothing else, and `Box<Int>` and `Box<String>` are different events. The
/// optional ``eventType`` is the second key, which ``SubscriberMaker/ofType(_:)`` filters on.
///
/// Events cross threads (a subscriber may run on another queue), so they are `Sendable`; value
/// types are the natural fit.
///
/// ```swift
/// struct LoginEvent: Event {
///     let userID: String
/// }
///
/// struct ChatMessage: Event {
///     let room: String
///     let text: String
///     var eventType: String? { room }   // subscribers can pick one room with ofType("room-7")
/// }
/// ```
public protocol Event: Sendable {
    /// The secondary routing key, or `nil` (the default) for none.
    ///
    /// A subscriber made with `ofType("k")` receives only events whose `eventType` is `"k"`; a
    /// subscriber made without `ofType` receives every event of the type, whatever its key.
    var eventType: String? { get }
}

extension Event {
    /// No secondary key: only subscribers without ``SubscriberMaker/ofType(_:)`` receive the event.
    public var eventType: String? { nil }
}
