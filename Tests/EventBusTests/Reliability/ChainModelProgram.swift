// The chain-operation interpreter shared by the model-based test (ChainModelTests.swift) and the
// libFuzzer target (Fuzz/, which symlinks this file): programs of mount, unmount, subscribe (plain,
// high, low, monitor, stopping `handle`), intercept (forward value + 1, or drop), dispose and post,
// run on real `EventNode`s and on a direct transcription of DESIGN §10 (the route fixed at post
// start; per node interceptors in registration order, then subscribers by level and registration;
// a stop or drop leaves only monitors). Public API only, like ModelProgram.swift.

import EventBus

/// The delivery log of one post: written by handlers on the posting thread only.
final class ChainLog: @unchecked Sendable {
    // @unchecked Sendable: a program is single-threaded and every handler is synchronous, so
    // `entries` is only touched on the thread that runs the program.
    var entries: [String] = []

    func append(_ entry: String) { entries.append(entry) }
}

enum ChainModelProgram {
    struct Hop: Event { let value: Int }

    enum Op: CustomStringConvertible {
        case mount(Int, on: Int)
        case unmount(Int)
        /// `policy`: 0 plain, 1 high, 2 low, 3 monitor, 4 stops.
        case subscribe(Int, policy: Int)
        /// `drops`: drop, else forward value + 1.
        case intercept(Int, drops: Bool)
        case dispose(Int)
        case post(from: Int, value: Int)

        var description: String {
            switch self {
            case .mount(let node, let parent): "mount(\(node), on: \(parent))"
            case .unmount(let node): "unmount(\(node))"
            case .subscribe(let node, let policy): "subscribe(\(node), policy: \(policy))"
            case .intercept(let node, let drops): "intercept(\(node), drops: \(drops))"
            case .dispose(let n): "dispose(#\(n))"
            case .post(let node, let value): "post(from: \(node), value: \(value))"
            }
        }
    }

    static let nodeCount = 6

    /// `count` operations from a seed (the model-based test).
    static func generate(seed: UInt64, count: Int) -> [Op] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in makeOp { Int(random.next() % UInt64($0)) } }
    }

    /// Operations from fuzzer bytes, with the same grammar (at most 256).
    static func decode(_ bytes: [UInt8]) -> [Op] {
        decodeProgram(bytes, limit: 256, makeOp)
    }

    /// The grammar: one operation from a source of numbers `draw(bound) in 0..<bound`.
    static func makeOp(_ draw: (Int) -> Int) -> Op {
        switch draw(10) {
        case 0, 1: .mount(draw(nodeCount), on: draw(nodeCount))
        case 2: .unmount(draw(nodeCount))
        case 3, 4: .subscribe(draw(nodeCount), policy: draw(5))
        case 5: .intercept(draw(nodeCount), drops: draw(4) == 0)
        case 6: .dispose(draw(8))
        default: .post(from: draw(nodeCount), value: draw(100))
        }
    }

    /// The reference: parents, and per node its interceptors and subscribers in registration order.
    struct Model {
        struct Entry {
            let id: Int
            let node: Int
            let policy: Int  // subscribers
            let drops: Bool?  // interceptors: non-nil
            var level: Int { [1, 0, 2, 4, 1][policy] }
            var isMonitor: Bool { policy == 3 }
        }
        var parent = [Int?](repeating: nil, count: ChainModelProgram.nodeCount)
        var entries: [Entry] = []

        mutating func mount(_ node: Int, on target: Int) -> Bool {
            var cursor: Int? = target
            while let current = cursor {
                if current == node { return false }
                cursor = parent[current]
            }
            parent[node] = target
            return true
        }

        func post(from node: Int, value: Int, log: inout [String]) -> ChainOutcome {
            var route = [node]
            while let next = parent[route.last!] { route.append(next) }
            var value = value
            var ending: ChainOutcome?
            var delivered = 0
            for (depth, current) in route.enumerated() {
                if ending == nil {
                    for entry in entries where entry.node == current && entry.drops != nil {
                        log.append("i\(entry.id) \(value)")
                        if entry.drops! {
                            ending = .dropped(atDepth: depth, delivered: 0)
                            break
                        }
                        value += 1
                    }
                }
                let subscribers = entries.filter { $0.node == current && $0.drops == nil }
                    .enumerated().sorted { ($0.element.level, $0.offset) < ($1.element.level, $1.offset) }
                    .map(\.element)
                for entry in subscribers where ending == nil || entry.isMonitor {
                    log.append("s\(entry.id) \(value)")
                    delivered += 1
                    if entry.policy == 4 && ending == nil { ending = .stopped(atDepth: depth, delivered: 0) }
                }
            }
            switch ending {
            case .stopped(let depth, _): return .stopped(atDepth: depth, delivered: delivered)
            case .dropped(let depth, _): return .dropped(atDepth: depth, delivered: delivered)
            default: return delivered == 0 ? .unhandled : .delivered(count: delivered)
            }
        }
    }

    /// Runs `ops` on real nodes and on the model; the first difference, or `nil`.
    static func check(_ ops: [Op], posts: inout Int) -> String? {
        let nodes = (0..<nodeCount).map { EventNode(name: "n\($0)") }
        var model = Model()
        var tokens: [(id: Int, token: EventToken)] = []
        let log = ChainLog()
        var nextID = 0
        for (step, op) in ops.enumerated() {
            switch op {
            case .mount(let node, let parent):
                let real = nodes[node].mount(on: nodes[parent])
                let expected = model.mount(node, on: parent)
                if real != expected { return "step \(step) \(op): mount returned \(real), model \(expected)" }
            case .unmount(let node):
                nodes[node].unmount()
                model.parent[node] = nil
            case .subscribe(let node, let policy):
                let id = nextID
                nextID += 1
                let maker = nodes[node].on(Hop.self)
                let token: EventToken =
                    switch policy {
                    case 1: maker.priority(.high).next { log.append("s\(id) \($0.value)") }
                    case 2: maker.priority(.low).next { log.append("s\(id) \($0.value)") }
                    case 3: maker.monitor().next { log.append("s\(id) \($0.value)") }
                    case 4:
                        maker.handle { event in
                            log.append("s\(id) \(event.value)")
                            return .stop
                        }
                    default: maker.next { log.append("s\(id) \($0.value)") }
                    }
                tokens.append((id, token))
                model.entries.append(.init(id: id, node: node, policy: policy, drops: nil))
            case .intercept(let node, let drops):
                let id = nextID
                nextID += 1
                let token = nodes[node].intercept(Hop.self) { event in
                    log.append("i\(id) \(event.value)")
                    return drops ? .drop : .forward(Hop(value: event.value + 1))
                }
                tokens.append((id, token))
                model.entries.append(.init(id: id, node: node, policy: 0, drops: drops))
            case .dispose(let n):
                guard !tokens.isEmpty else { continue }
                let (id, token) = tokens.remove(at: n % tokens.count)
                token.dispose()
                model.entries.removeAll { $0.id == id }
            case .post(let node, let value):
                posts += 1
                log.entries = []
                let outcome = nodes[node].post(Hop(value: value))
                var expected: [String] = []
                let expectedOutcome = model.post(from: node, value: value, log: &expected)
                if log.entries != expected || outcome != expectedOutcome {
                    return
                        "step \(step) \(op): delivered \(log.entries) → \(outcome), model \(expected) → \(expectedOutcome)"
                }
            }
        }
        return nil
    }

}
