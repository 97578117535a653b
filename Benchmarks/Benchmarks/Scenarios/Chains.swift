// Event chains (issue 10): a post up a chain of depth 1, 5 and 20 to one subscriber at the root,
// against hand-written delegate forwarding (the floor: each level holds its parent weakly and
// forwards by a method call, what a UIKit delegate chain does) and against a bus dispatch to one
// subscriber (which does not depend on depth); a request answered at the root of a depth-5 chain.
//
// Names: "chain_depth=<D>_<contender>", "request_depth=5_<contender>".

import EventBus

/// One level of a hand-written delegate chain.
final class DelegateLevel {
    weak var parent: DelegateLevel?
    var handler: ((Int) -> Void)?
    var answerer: (() -> String)?

    init(parent: DelegateLevel?) { self.parent = parent }

    @inline(never)
    func forward(_ value: Int) {
        if let handler { handler(value) }
        parent?.forward(value)
    }

    @inline(never)
    func ask() -> String? {
        if let answerer { return answerer() }
        return parent?.ask()
    }
}

struct FetchName: Request { typealias Response = String }

/// `depth` levels, each mounted on the previous; returns them, root first.
private func delegates(depth: Int) -> [DelegateLevel] {
    var levels: [DelegateLevel] = [DelegateLevel(parent: nil)]
    for _ in 1..<depth { levels.append(DelegateLevel(parent: levels.last)) }
    return levels
}

private func nodes(depth: Int) -> [EventNode] {
    var nodes = [EventNode(name: "level 0")]
    for level in 1..<depth {
        let node = EventNode(name: "level \(level)")
        node.mount(on: nodes.last!)
        nodes.append(node)
    }
    return nodes
}

func chainScenarios() -> [Scenario] {
    [1, 5, 20].flatMap { depth in
        [
            Scenario("chain depth=\(depth) delegate") {
                let levels = delegates(depth: depth)
                let sink = Sink()
                levels[0].handler = { sink.take($0) }
                return Workload { operations in
                    for i in 0..<operations { levels[depth - 1].forward(i) }
                }
            },
            Scenario("chain depth=\(depth) EventNode") {
                let levels = nodes(depth: depth)
                let sink = Sink()
                let token = levels[0].on(Tick.self).next { sink.take($0.value) }
                return Workload(finish: { token.dispose() }) { operations in
                    for i in 0..<operations { levels[depth - 1].post(Tick(value: i)) }
                }
            },
            Scenario("chain depth=\(depth) EventBus") {
                let bus = EventBus()
                let sink = Sink()
                let token = bus.on(Tick.self).next { sink.take($0.value) }
                return Workload(finish: { token.dispose() }) { operations in
                    for i in 0..<operations { bus.dispatch(Tick(value: i)) }
                }
            },
        ]
    } + [
        Scenario("request depth=5 delegate") {
            let levels = delegates(depth: 5)
            let sink = Sink()
            levels[0].answerer = { "root" }
            return Workload { operations in
                for _ in 0..<operations { sink.take(levels[4].ask()?.utf8.count ?? 0) }
            }
        },
        Scenario("request depth=5 EventNode") {
            let levels = nodes(depth: 5)
            let sink = Sink()
            let token = levels[0].answer(FetchName.self) { _ in .answer("root") }
            return Workload(finish: { token.dispose() }) { operations in
                for _ in 0..<operations { sink.take((try? levels[4].request(FetchName()))?.utf8.count ?? 0) }
            }
        },
    ]
}
