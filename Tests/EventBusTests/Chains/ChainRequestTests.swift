import EventBus
import Testing

/// Typed requests up a chain: the first answerer up the route answers (`.pass` goes on, in route
/// then registration order); no answerer is a typed error naming the request and the route; an
/// answerer's error is the request's; a synchronous request that meets an async answerer first
/// throws rather than skip it, and the async request awaits async answerers in turn.
@Suite("Chains: requests", .offThePool)
struct ChainRequestTests {
    struct FetchChannelID: Request {
        typealias Response = String
    }
    struct Search: Request {
        typealias Response = [String]
        var text = ""
    }
    struct Refused: Error, Equatable {}

    static func chain() -> (root: EventNode, middle: EventNode, leaf: EventNode) {
        let root = EventNode(name: "Root")
        let middle = EventNode(name: "Middle")
        let leaf = EventNode(name: "Leaf")
        middle.mount(on: root)
        leaf.mount(on: middle)
        return (root, middle, leaf)
    }

    @Test("The first answerer up the route answers; .pass continues, in route and registration order")
    func firstAnswererAnswers() throws {
        let (root, middle, leaf) = Self.chain()
        let asked = Shared<[String]>([])
        _ = root.answer(FetchChannelID.self) { _ in
            asked.append("root")
            return .answer("channel-root")
        }
        _ = middle.answer(FetchChannelID.self) { _ in
            asked.append("middle 1")
            return .pass
        }
        let second = middle.answer(FetchChannelID.self) { _ in
            asked.append("middle 2")
            return .answer("channel-2")
        }
        #expect(try leaf.request(FetchChannelID()) == "channel-2")
        #expect(asked.value == ["middle 1", "middle 2"])
        second.dispose()
        #expect(try leaf.request(FetchChannelID()) == "channel-root")
        #expect(try root.request(FetchChannelID()) == "channel-root")
    }

    @Test("No answerer: a typed error naming the request type and the route")
    func unanswered() {
        let (root, middle, leaf) = Self.chain()  // parents are held weakly: keep them
        defer { withExtendedLifetime(middle) {} }
        _ = root.answer(FetchChannelID.self) { _ in .pass }
        #expect {
            try leaf.request(FetchChannelID())
        } throws: { error in
            guard let error = error as? ChainRequestError,
                case .unanswered(let request, let route) = error
            else { return false }
            return request.hasSuffix("FetchChannelID") && route == ["Leaf", "Middle", "Root"]
                && error.description.contains("Leaf → Middle → Root")
        }
    }

    @Test("An answerer's error is the request's")
    func answererThrows() {
        let (root, middle, leaf) = Self.chain()  // parents are held weakly: keep them
        defer { withExtendedLifetime(middle) {} }
        _ = root.answer(FetchChannelID.self) { _ in throw Refused() }
        #expect(throws: Refused.self) { try leaf.request(FetchChannelID()) }
    }

    @Test("A synchronous request meeting an async answerer first throws rather than skipping it")
    func syncMeetsAsync() {
        let (root, middle, leaf) = Self.chain()
        _ = middle.answer(Search.self) { search async in .answer([search.text]) }
        _ = root.answer(Search.self) { _ in .answer(["root"]) }
        #expect {
            try leaf.request(Search(text: "x"))
        } throws: { error in
            (error as? ChainRequestError)
                == .asyncAnswerer(
                    request: String(reflecting: Search.self), route: ["Leaf", "Middle", "Root"], atDepth: 1)
        }
    }

    @Test("The async request awaits async answerers in turn; .pass goes on to the next answerer")
    func asyncRequest() async throws {
        let (root, middle, leaf) = Self.chain()
        let asked = Shared<[String]>([])
        _ = middle.answer(Search.self) { _ async in
            asked.append("middle async")
            return .pass
        }
        _ = middle.answer(Search.self) { _ in
            asked.append("middle sync")
            return .pass
        }
        _ = root.answer(Search.self) { search async throws in
            asked.append("root async")
            await Task.yield()
            return .answer([search.text, "2"])
        }
        let hits = try await leaf.request(Search(text: "x"))
        #expect(hits == ["x", "2"])
        #expect(asked.value == ["middle async", "middle sync", "root async"])
        // Synchronous answers work with the async form too.
        _ = leaf.answer(Search.self) { _ in .answer(["leaf"]) }
        #expect(try await leaf.request(Search()) == ["leaf"])
        await #expect(throws: ChainRequestError.self) { try await leaf.request(FetchChannelID()) }
    }
}
