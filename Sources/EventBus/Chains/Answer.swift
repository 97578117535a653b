/// What an answerer (`EventNode.answer(_:_:)`) returns:
/// the response, or ``pass`` to let the next answerer up the route answer.
///
/// ```swift
/// let root = EventNode(name: "Root")
/// let signedIn = false
/// _ = root.answer(FetchChannelID.self) { _ in signedIn ? .answer("channel-2") : .pass }
/// ```
public enum Answer<Response: Sendable>: Sendable {
    /// The request's response: `EventNode.request(_:)` returns it.
    case answer(Response)
    /// Not this answerer's question: the next answerer (of this node, then of the nodes above) is
    /// asked.
    case pass
}
