import Dispatch
import Testing

@testable import EventBus

/// Requests on a main-actor chain: an `async` `@MainActor` answerer answers a request awaited from
/// below, on the main actor; async and synchronous answerers run in route order (`.pass` goes on);
/// the synchronous request that meets an async answerer first throws `asyncAnswerer`; each answer
/// closure and request form picks its own overload.
@Suite("Chains: main-actor requests and async answerers", .offThePool)
@MainActor
struct MainActorChainRequestTests {
    struct FetchChannelID: Request { typealias Response = String }
    struct Search: Request {
        typealias Response = [String]
        var text = ""
    }
    struct Refused: Error, Equatable {}

    @MainActor final class Index {
        var words = ["swift", "swiftui", "rust"]
    }

    let root = MainActorEventNode(name: "Root")
    let list = MainActorEventNode(name: "List")
    let cell = MainActorEventNode(name: "Cell")

    init() {
        list.mount(on: root)
        cell.mount(on: list)
    }

    @Test("An async @MainActor answerer at the root answers a request awaited from a cell, on the main actor")
    func asyncAnswererAtRoot() async throws {
        let index = Index()
        let ranOnMain = Shared<[Bool]>([])
        let token = root.answer(Search.self) { search async in
            ranOnMain.withLock { $0.append(isOnMainQueue) }
            await Task.yield()
            ranOnMain.withLock { $0.append(isOnMainQueue) }
            return .answer(index.words.filter { $0.hasPrefix(search.text) })  // main-actor state
        }
        #expect(try await cell.request(Search(text: "swift")) == ["swift", "swiftui"])
        #expect(ranOnMain.value == [true, true])
        // From a task that is not on the main actor: the request hops there.
        let cell = cell
        let hits = try await Task.detached { try await cell.request(Search(text: "r")) }.value
        #expect(hits == ["rust"])
        token.dispose()
        await #expect(throws: ChainRequestError.self) { try await cell.request(Search()) }
    }

    @Test("Async and synchronous @MainActor answerers in route order: .pass goes on to the next")
    func passGoesOn() async throws {
        let asked = Shared<[String]>([])
        let tokens = [
            list.answer(Search.self) { _ async in
                asked.append("list async")
                return .pass
            },
            list.answer(Search.self) { _ in
                asked.append("list sync")  // synchronous, on the main queue, within the async request
                return .pass
            },
            root.answer(Search.self) { search async throws in
                asked.append("root async")
                await Task.yield()
                return .answer([search.text, "2"])
            },
        ]
        #expect(try await cell.request(Search(text: "x")) == ["x", "2"])
        #expect(asked.value == ["list async", "list sync", "root async"])
        // A synchronous answer is returned by the async request too, and an answerer's error is thrown.
        let first = cell.answer(Search.self) { _ in .answer(["cell"]) }
        #expect(try await cell.request(Search()) == ["cell"])
        first.dispose()
        let refusing = list.answer(Search.self) { _ async throws in throw Refused() }
        await #expect(throws: Refused.self) { try await cell.request(Search()) }
        for token in tokens + [refusing] { token.dispose() }
    }

    @Test("The synchronous request meeting an async answerer first throws asyncAnswerer")
    func syncMeetsAsync() throws {
        let tokens = [
            list.answer(Search.self) { search async in .answer([search.text]) },
            root.answer(Search.self) { _ in .answer(["root"]) },
        ]
        #expect {
            try cell.request(Search(text: "x"))
        } throws: { error in
            (error as? ChainRequestError)
                == .asyncAnswerer(
                    request: String(reflecting: Search.self), route: ["Cell", "List", "Root"], atDepth: 1)
        }
        let answered = cell.answer(Search.self) { _ in .answer(["cell"]) }
        #expect(try cell.request(Search()) == ["cell"])
        for token in tokens + [answered] { token.dispose() }
    }

    /// The synchronous forms in a synchronous function.
    func channel(of node: MainActorEventNode) throws -> String {
        try node.request(FetchChannelID())
    }

    @Test("Overloads: sync and async answer closures and request forms each pick their own")
    func overloads() async throws {
        let bag = DisposeBag()
        root.answer(FetchChannelID.self) { _ in .answer("channel-2") }.disposed(by: bag)  // synchronous
        root.answer(Search.self) { search in
            await Task.yield()  // an `await` makes the closure async
            return .answer([search.text])
        }.disposed(by: bag)
        #expect(try channel(of: cell) == "channel-2")  // the synchronous request in a synchronous function
        #expect(try await cell.request(FetchChannelID()) == "channel-2")
        #expect(try await cell.request(Search(text: "x")) == ["x"])
        let cell = cell
        let fromElsewhere: @Sendable () async throws -> [String] = { try await cell.request(Search(text: "y")) }
        #expect(try await fromElsewhere() == ["y"])
    }
}
