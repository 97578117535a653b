/// Why `EventNode.request(_:)` threw (besides an error an answerer threw itself).
///
/// Each case names the request type and the route that was asked (the nodes' names, from the
/// requesting node up).
///
/// ```swift
/// do {
///     _ = try EventNode(name: "Cell").request(FetchChannelID())
/// } catch let error as ChainRequestError {
///     print(error)   // no answerer for FetchChannelID on the route Cell
/// }
/// ```
public enum ChainRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No answerer on the route answered (none registered, or all returned ``Answer/pass``).
    case unanswered(request: String, route: [String])
    /// The synchronous `EventNode.request(_:)` met an `async` answerer before any answer: it
    /// throws rather than skip it. Use `try await node.request(_:)`.
    case asyncAnswerer(request: String, route: [String], atDepth: Int)

    /// A sentence naming the request type and the route.
    ///
    /// ```swift
    /// let error = ChainRequestError.unanswered(request: "FetchChannelID", route: ["Cell", "Root"])
    /// print(error)   // no answerer for FetchChannelID on the route Cell → Root
    /// ```
    public var description: String {
        switch self {
        case .unanswered(let request, let route):
            "no answerer for \(request) on the route \(route.joined(separator: " → "))"
        case .asyncAnswerer(let request, let route, let depth):
            "the synchronous request(\(request)) met an async answerer at \(route[depth]) (depth \(depth)) on the route \(route.joined(separator: " → ")): use `try await request(_:)`"
        }
    }
}
