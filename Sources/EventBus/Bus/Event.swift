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
///     var eventType: String { room }   // subscribers can pick one room with ofType("room-7")
/// }
/// ```
///
/// ## The key's type
///
/// Declare ``eventType`` as `String` when every event of the type has a key, as `String?` when
/// some have none, or not at all (the default: no key, ``NoEventTypeKey``). Its type is inferred
/// from your declaration (it is the associated type ``EventTypeKey``), so both spellings route.
/// On a type that declares none, ``SubscriberMaker/ofType(_:)`` could never match: the compiler
/// warns at the call. A key of
/// another type must conform to ``EventRoutingKey``: a `String`-backed enum does with a one-line
/// conformance, and the usual mistakes — a number, `Bool`, `Substring`, `Character`, or an
/// optional of them — are rejected by the compiler rather than silently ignored.
///
/// ```swift
/// enum Room: String, EventRoutingKey { case lobby, kitchen }
///
/// struct Knock: Event {
///     let room: Room
///     var eventType: Room { room }   // routes as room.rawValue: ofType("lobby")
/// }
/// ```
public protocol Event: Sendable {
    /// The type of ``eventType``, inferred from its declaration: ``NoEventTypeKey`` when the event
    /// does not declare one.
    associatedtype EventTypeKey: EventRoutingKey = NoEventTypeKey

    /// The secondary routing key; by default `nil`, for none.
    ///
    /// A subscriber made with `ofType("k")` receives only events whose `eventType` is `"k"`; a
    /// subscriber made without `ofType` receives every event of the type, whatever its key.
    var eventType: EventTypeKey { get }

    /// Not API: the key as the bus routes it. Do not implement it; the default (``eventType``
    /// converted to `String?`) is the only correct one.
    ///
    /// A requirement rather than a plain extension property so that the conversion is compiled,
    /// specialized, into each event type's conformance: the bus's unspecialized generic code (a
    /// chain post, a sticky or queued dispatch) then reads the key with one call (the measurement:
    /// Benchmarks/README.md, "Performance notes"). Underscored, it stays out of the docs.
    var _routingKey: String? { get }
}

extension Event where EventTypeKey == NoEventTypeKey {
    /// No secondary key: only subscribers without ``SubscriberMaker/ofType(_:)`` receive the event.
    public var eventType: NoEventTypeKey { NoEventTypeKey() }
}

/// The ``Event/eventType`` of an event that declares none: it routes as no key.
///
/// You never write it: it is what the compiler infers when an event has no `eventType`. It lets
/// ``SubscriberMaker/ofType(_:)`` warn at compile time on such an event, whose keyed subscribers
/// could never receive anything.
///
/// ```swift
/// struct LoginEvent: Event { let userID: String }   // LoginEvent.EventTypeKey == NoEventTypeKey
/// _ = EventBus.shared.on(LoginEvent.self).next { print($0.userID) }   // unkeyed: receives them all
/// ```
public struct NoEventTypeKey: EventRoutingKey, Hashable {
    /// The only value.
    ///
    /// ```swift
    /// let none = NoEventTypeKey()
    /// ```
    @inlinable
    public init() {}

    /// Always `nil`: no key.
    @inlinable
    public var _eventRoutingKey: String? { nil }
}

extension Event {
    /// The default, and only, implementation; see the requirement.
    @inlinable
    public var _routingKey: String? { eventType._eventRoutingKey }

    /// The secondary key as the bus routes it: ``eventType`` as a `String?`. The core reads the
    /// key through this, never through `eventType`, whose type depends on the event.
    @inline(__always)
    package var routingKey: String? { _routingKey }
}

/// A type an event's ``Event/eventType`` may have: `String`, `String?`, or a type of yours that
/// stands for a string key.
///
/// A `String`-backed enum conforms with a one-line declaration and routes as its raw value:
///
/// ```swift
/// enum Room: String, EventRoutingKey { case lobby, kitchen }
/// ```
///
/// Numbers, `Bool`, `Substring` and `Character` deliberately do not conform: an `eventType` of one
/// of those types is a compile error ("conformance … is unavailable"), not a key that is silently
/// ignored. Convert it to a `String` in the property instead.
public protocol EventRoutingKey: Sendable {
    /// Not API: the key as a string, or `nil` for none. Provided for `String`, optionals and
    /// `String`-backed enums.
    var _eventRoutingKey: String? { get }
}

extension String: EventRoutingKey {
    /// The string itself.
    @inlinable
    public var _eventRoutingKey: String? { self }
}

extension Optional: EventRoutingKey where Wrapped: EventRoutingKey {
    /// The wrapped key, or `nil`.
    @inlinable
    public var _eventRoutingKey: String? { self?._eventRoutingKey }
}

extension EventRoutingKey where Self: RawRepresentable, RawValue == String {
    /// The raw value.
    @inlinable
    public var _eventRoutingKey: String? { rawValue }
}

// The usual wrong types for a key: declaring `var eventType: Int` (or `Int?`, …) must not compile,
// rather than leave the protocol's default `nil` in charge. (Swift infers `EventTypeKey` from the
// declaration only when the declared type conforms; otherwise it falls back to the default and the
// declaration is an unrelated property. An unavailable conformance turns that fallback into an
// error that names the problem.)

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension Int: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension Int8: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension Int16: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension Int32: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension Int64: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension UInt: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension UInt8: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension UInt16: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension UInt32: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension UInt64: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension Double: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension Float: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension Bool: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension Substring: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}

@available(*, unavailable, message: "eventType must be String, String? or an EventRoutingKey")
extension Character: EventRoutingKey {
    public var _eventRoutingKey: String? { nil }
}
