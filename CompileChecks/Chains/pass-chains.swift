import Dispatch
import EventBus

// What chains allow compiles.
@MainActor func allowed(_ node: EventNode, _ main: MainActorEventNode, model: Model) -> [EventToken] {
    main.mount(on: MainActorEventNode())
    return [
        node.on(Tap.self).handle { _ in .stop },
        node.on(Tap.self).monitor().atQueue(.global()).next { _ in },
        node.on(Tap.self).onMainActor().next { _ in model.count += 1 },
        node.intercept(Tap.self) { .forward($0) },
        main.on(Tap.self).next { _ in model.count += 1 },
        main.intercept(Tap.self) { _ in model.count > 0 ? .drop : .forward(Tap()) },
    ]
}
