import Dispatch
import EventBus

struct Search: Request {
    typealias Response = [String]
    let text: String
}

// What chains allow compiles.
@MainActor func allowed(_ node: EventNode, _ main: MainActorEventNode, model: Model) -> [EventToken] {
    main.mount(on: MainActorEventNode())
    return [
        node.on(Tap.self).handle { _ in .stop },
        node.on(Tap.self).monitor().atQueue(.global()).next { _ in },
        node.on(Tap.self).onMainActor().next { _ in model.count += 1 },
        node.intercept(Tap.self) { .forward($0) },
        main.on(Tap.self).next { _ in model.count += 1 },
        main.on(Tap.self).priority(.high).handle { _ in model.count > 0 ? .stop : .continue },
        main.on(Tap.self).handle { _ throws in .continue },
        main.on(Tap.self).freeWith(model).handle { model, _ in model.count > 0 ? .stop : .continue },
        main.on(Tap.self).freeWith(model).handle { _, _ throws in .continue },
        main.on(Tap.self).monitor().next { _ in model.count += 1 },
        main.on(Tap.self).atQueue(.global()).next { _ in },
        main.intercept(Tap.self) { _ in model.count > 0 ? .drop : .forward(Tap()) },
        main.answer(Search.self) { search in .answer([search.text, "\(model.count)"]) },
        main.answer(Search.self) { search async in .answer([search.text, "\(model.count)"]) },
    ]
}

// Both request forms: the synchronous one in synchronous code, the awaiting one in async code
// (from the main actor or from anywhere).
@MainActor func ask(_ main: MainActorEventNode) throws -> [String] {
    try main.request(Search(text: "x"))
}

@MainActor func askAwaiting(_ main: MainActorEventNode) async throws -> [String] {
    try await main.request(Search(text: "x"))
}

func askFromAnywhere(_ main: MainActorEventNode) async throws -> [String] {
    try await main.request(Search(text: "x"))
}
