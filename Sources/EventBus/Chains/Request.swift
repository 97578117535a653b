/// A question a node asks up its chain, answered by the first ancestor that knows
/// (`EventNode.request(_:)`).
///
/// The request's type is its key, as an event's is: answerers register with
/// `EventNode.answer(_:_:)` for the type and return a
/// typed ``Response``.
///
/// ```swift
/// struct FetchChannelID: Request {
///     typealias Response = String
/// }
/// let root = EventNode(name: "Root")
/// let cell = EventNode(name: "Cell")
/// _ = cell.mount(on: root)
/// _ = root.answer(FetchChannelID.self) { _ in .answer("channel-2") }
/// let id = try cell.request(FetchChannelID())   // "channel-2"
/// ```
public protocol Request: Sendable {
    /// What the answerer returns.
    associatedtype Response: Sendable
}
